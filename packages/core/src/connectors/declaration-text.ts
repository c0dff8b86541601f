/** The small pieces of declaration text: doc comments, property keys and type names, indentation. */

/** Longer annotation values (zod's date-time pattern…) help nobody in a doc comment. */
const ANNOTATION_WIDTH = 100;
const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

/** A property schema's description (or title) and its constraints, as doc comment lines. */
export function schemaDocumentation(schema: unknown): string[] {
  if (!isPlainObject(schema)) return [];
  const lines = textLines(
    typeof schema.description === "string"
      ? schema.description
      : typeof schema.title === "string"
        ? schema.title
        : undefined,
  );
  for (const keyword of ANNOTATED_KEYWORDS) {
    const value = schema[keyword];
    let text: string | undefined;
    if (typeof value === "string") text = value;
    else if (typeof value === "number" && Number.isFinite(value) && Math.abs(value) !== Number.MAX_SAFE_INTEGER)
      text = String(value);
    else if (value === true && keyword === "uniqueItems") text = "";
    if (keyword === "default" && value !== undefined) text = JSON.stringify(value);
    if (text !== undefined && text.length <= ANNOTATION_WIDTH)
      lines.push(`@${keyword}${text === "" ? "" : ` ${text}`}`);
  }
  if (schema.deprecated === true) lines.push("@deprecated");
  return lines;
}
/** Written with their values; zod writes ±MAX_SAFE_INTEGER bounds for every integer, which say nothing. */
const ANNOTATED_KEYWORDS = [
  "format",
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "multipleOf",
  "minLength",
  "maxLength",
  "pattern",
  "minItems",
  "maxItems",
  "uniqueItems",
  "default",
] as const;

/** `/** … *\/` and a line break, or "" for no lines; a `*\/` in the text cannot end the comment. */
export function docComment(lines: readonly string[]): string {
  if (lines.length === 0) return "";
  const escaped = lines.map((line) => line.replaceAll("*/", "*\\/"));
  if (escaped.length === 1) return `/** ${escaped[0]} */\n`;
  return `/**\n${escaped.map((line) => (line === "" ? " *" : ` * ${line}`)).join("\n")}\n */\n`;
}

export function textLines(text: string | undefined): string[] {
  if (text === undefined) return [];
  const trimmed = text.trim();
  return trimmed === "" ? [] : trimmed.split(/\r\n|\r|\n/).map((line) => line.trimEnd());
}

export function propertyKey(name: string): string {
  return IDENTIFIER.test(name) ? name : JSON.stringify(name);
}

/** `create_issue` → `CreateIssue`, `__schema0` → `Schema0`. An upper-case start is never a keyword. */
export function pascalCase(text: string): string {
  const words = text.split(/[^A-Za-z0-9]+/).filter((word) => word !== "");
  const joined = words.map((word) => word[0]!.toUpperCase() + word.slice(1)).join("");
  return joined === "" || /^\d/.test(joined) ? `Type${joined}` : joined;
}

export function indentLines(text: string): string {
  return text
    .split("\n")
    .map((line) => (line === "" ? line : `  ${line}`))
    .join("\n");
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
