/** Type expressions as text, combined so that the result needs no more parentheses than it must. */
import { isPlainObject, propertyKey } from "./declaration-text.js";

/** A type expression and how tightly it binds, to know where it needs parentheses. */
export interface TypeText {
  text: string;
  precedence: "union" | "intersection" | "primary";
  /** The members of a union or intersection, to flatten nested ones. */
  members?: readonly TypeText[];
}

export const UNKNOWN: TypeText = { text: "unknown", precedence: "primary" };
export const NEVER: TypeText = { text: "never", precedence: "primary" };
export const NULL: TypeText = { text: "null", precedence: "primary" };
export const UNDEFINED: TypeText = { text: "undefined", precedence: "primary" };
export const KEYWORD_TYPES: ReadonlyMap<string, TypeText> = new Map([
  ["string", { text: "string", precedence: "primary" }],
  ["number", { text: "number", precedence: "primary" }],
  ["integer", { text: "number", precedence: "primary" }],
  ["boolean", { text: "boolean", precedence: "primary" }],
  ["null", NULL],
]);

export function literalType(value: unknown): TypeText {
  if (typeof value === "string" || typeof value === "boolean" || value === null)
    return { text: JSON.stringify(value), precedence: "primary" };
  if (typeof value === "number") {
    if (!Number.isFinite(value)) return UNKNOWN;
    // A negative literal is a prefix expression: `(-1)[]` needs the parentheses.
    return { text: String(value), precedence: value < 0 ? "intersection" : "primary" };
  }
  if (Array.isArray(value))
    return { text: `[${value.map((element) => literalType(element).text).join(", ")}]`, precedence: "primary" };
  if (isPlainObject(value)) {
    const members = Object.entries(value).map(([key, member]) => `${propertyKey(key)}: ${literalType(member).text}`);
    return {
      text: members.length === 0 ? "{ [key: string]: never }" : `{ ${members.join("; ")} }`,
      precedence: "primary",
    };
  }
  return UNKNOWN;
}

export function unionOf(types: readonly TypeText[]): TypeText {
  const members = distinct(
    types.flatMap((type) => (type.precedence === "union" && type.members !== undefined ? type.members : [type])),
  );
  if (members.some((member) => member.text === "unknown")) return UNKNOWN;
  const possible = members.filter((member) => member.text !== "never");
  if (possible.length === 0) return NEVER;
  if (possible.length === 1) return possible[0]!;
  return { text: possible.map((member) => member.text).join(" | "), precedence: "union", members: possible };
}

export function intersectionOf(types: readonly TypeText[]): TypeText {
  const members = distinct(
    types.flatMap((type) => (type.precedence === "intersection" && type.members !== undefined ? type.members : [type])),
  );
  if (members.some((member) => member.text === "never")) return NEVER;
  const constraining = members.filter((member) => member.text !== "unknown");
  if (constraining.length === 0) return UNKNOWN;
  if (constraining.length === 1) return constraining[0]!;
  const text = constraining
    .map((member) => (member.precedence === "union" ? `(${member.text})` : member.text))
    .join(" & ");
  return { text, precedence: "intersection", members: constraining };
}

export function arrayOf(element: TypeText): TypeText {
  return {
    text: element.precedence === "primary" ? `${element.text}[]` : `(${element.text})[]`,
    precedence: "primary",
  };
}

function distinct(types: readonly TypeText[]): TypeText[] {
  const seen = new Set<string>();
  return types.filter((type) => !seen.has(type.text) && seen.add(type.text));
}
