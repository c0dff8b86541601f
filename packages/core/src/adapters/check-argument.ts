// What plain JavaScript can hand an adapter wrong, checked when a function is called: a mistake
// fails there, saying what was expected, instead of later inside the framework or never. Each
// adapter (ai-sdk/src/check-options.ts, langchain/src/check-options.ts) adds its own expectations.
import type { CodemodeRuntime } from "../runtime/handle/index.js";

/** What a value must be: `expected` reads after "must be"; nested parts are checked when present. */
export interface Expectation {
  expected: string;
  accepts(value: unknown): boolean;
  /** Checked for every entry of an accepted object. */
  entries?: Expectation;
  /** Checked for each of these fields of an accepted object, when present. */
  fields?: Readonly<Record<string, Expectation>>;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

export const STRING: Expectation = { expected: "a string", accepts: (value) => typeof value === "string" };
export const BOOLEAN: Expectation = { expected: "true or false", accepts: (value) => typeof value === "boolean" };
export const RECORD: Expectation = { expected: "an object", accepts: isRecord };
const COUNT: Expectation = {
  expected: "a number ≥ 0",
  accepts: (value) => typeof value === "number" && value >= 0,
};

/** An object whose values are all `entry`. */
export function recordOf(entry: Expectation, expected: string): Expectation {
  return { expected, accepts: isRecord, entries: entry };
}

/** An object with these fields, each checked when present; the `required` ones must be. */
export function shapeOf(
  fields: Readonly<Record<string, Expectation>>,
  expected = "an object",
  required: readonly string[] = [],
): Expectation {
  return {
    expected,
    accepts: (value) => isRecord(value) && required.every((field) => fields[field]?.accepts(value[field])),
    fields,
  };
}

/** Per connector name, extra text for its line of the tool's description. */
export const HINTS = recordOf(
  STRING,
  "an object of strings by connector name, e.g. { github: 'Repos live under acme/.' }",
);
export const MODEL_OUTPUT = shapeOf(
  { maxLogLines: COUNT, maxLogLineChars: COUNT },
  "an object { maxLogLines?, maxLogLineChars? } of numbers",
);
/** An outcome of the runtime: what `runtime.execute` or `runtime.approve` resolved to. */
export const OUTCOME: Expectation = {
  expected: "an Outcome (what runtime.approve or runtime.execute resolved to)",
  accepts: (value) => isRecord(value) && typeof value.status === "string" && typeof value.executionId === "string",
};

/** A CodemodeRuntime, as far as `methods` (the ones the function uses) go. */
export function runtimeWith(...methods: Array<keyof CodemodeRuntime>): Expectation {
  return {
    expected: `a CodemodeRuntime from createCodemodeRuntime (with ${methods.join(", ")})`,
    accepts: (value) => isRecord(value) && methods.every((method) => typeof value[method] === "function"),
  };
}

/**
 * Throws a TypeError naming the call, the argument and what was expected, unless `value` meets
 * `expectation` (its entries and fields too, where present).
 *
 * @example
 * checkArgument("continueAfterApproval(messages, outcome)", "outcome", outcome, OUTCOME);
 */
export function checkArgument(call: string, name: string, value: unknown, expectation: Expectation): void {
  if (!expectation.accepts(value))
    throw new TypeError(`${call}: ${name} must be ${expectation.expected}; got ${describeValue(value)}.`);
  if (!isRecord(value)) return;
  if (expectation.entries)
    for (const [key, entry] of Object.entries(value)) checkArgument(call, `${name}.${key}`, entry, expectation.entries);
  for (const [field, fieldExpectation] of Object.entries(expectation.fields ?? {}))
    if (value[field] !== undefined) checkArgument(call, `${name}.${field}`, value[field], fieldExpectation);
}

/** `checkArgument` for an options object: absent is fine; each field is checked when present. */
export function checkOptions(call: string, options: unknown, fields: Readonly<Record<string, Expectation>>): void {
  if (options !== undefined) checkArgument(call, "options", options, shapeOf(fields));
}

/** A value as an error message shows it: its kind, and enough of it to recognise. */
export function describeValue(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (typeof value === "string")
    return `the string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`;
  if (typeof value === "function") return value.name ? `the function ${value.name}` : "a function";
  if (typeof value !== "object") return `${typeof value} ${String(value)}`;
  if (Array.isArray(value)) return `an array of ${value.length}`;
  const record = value as Record<string, unknown>;
  if (typeof record.then === "function") return "a promise (await it first)";
  if (typeof record.execute === "function" && typeof record.approve === "function") return "a CodemodeRuntime";
  const keys = Object.keys(record);
  if (keys.length === 0) return "an empty object";
  return `an object { ${keys.slice(0, 6).join(", ")}${keys.length > 6 ? ", …" : ""} }`;
}
