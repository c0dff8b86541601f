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
  return combine("union", types);
}

export function intersectionOf(types: readonly TypeText[]): TypeText {
  return combine("intersection", types);
}

/** How tightly each precedence binds: a member binding more loosely than its operator needs parentheses. */
const BINDING = { union: 0, intersection: 1, primary: 2 } as const;

/** `unknown` absorbs a union and adds nothing to an intersection; `never`, the other way round. */
const OPERATORS = {
  union: { separator: " | ", absorbing: UNKNOWN, neutral: NEVER },
  intersection: { separator: " & ", absorbing: NEVER, neutral: UNKNOWN },
} as const;

function combine(precedence: "union" | "intersection", types: readonly TypeText[]): TypeText {
  const { separator, absorbing, neutral } = OPERATORS[precedence];
  const members = distinct(
    types.flatMap((type) => (type.precedence === precedence && type.members !== undefined ? type.members : [type])),
  );
  if (members.some((member) => member.text === absorbing.text)) return absorbing;
  const operands = members.filter((member) => member.text !== neutral.text);
  if (operands.length === 0) return neutral;
  if (operands.length === 1) return operands[0]!;
  const text = operands
    .map((member) => (BINDING[member.precedence] < BINDING[precedence] ? `(${member.text})` : member.text))
    .join(separator);
  return { text, precedence, members: operands };
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
