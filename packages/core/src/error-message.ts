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
