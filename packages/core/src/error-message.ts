/**
 * The message of anything thrown: an Error's `message`, anything else as text. The one place
 * this is written; every report of a caught error goes through it.
 *
 * @example
 * try { await tool.execute(args) } catch (error) { warn(`the tool failed: ${errorMessage(error)}`) }
 */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Whether `value` is an error of the class named `name` from any copy of the package that
 * defines it (two copies of a package make two classes, so `instanceof` can say no): its `name`,
 * and, when given, a string `field` every such error carries. The brand check of every error
 * class of the packages (`CodemodeError.isInstance` and the like).
 *
 * @example
 * static isInstance(error: unknown): error is CodemodeError { return isErrorNamed(error, "CodemodeError", "code"); }
 */
export function isErrorNamed(value: unknown, name: string, field?: string): boolean {
  if (typeof value !== "object" || value === null || (value as { name?: unknown }).name !== name) return false;
  return field === undefined || typeof (value as Record<string, unknown>)[field] === "string";
}
