import { decodeDurable } from "../../log/durable-value.js";
import type { ArgumentDifference, Divergence, DivergentCall } from "../../outcome.js";

/** Differences listed per divergence; the rest are counted in the message only. */
export const MAX_DIFFERENCES = 20;
/** Characters of a value a difference shows. */
const MAX_VALUE_CHARS = 200;
/** How deep the comparison walks into nested arguments. */
const MAX_DEPTH = 32;

/** The call as it was recorded or issued, with its arguments decoded from their wire text. */
export function divergentCall(connector: string, method: string, argsText: string): DivergentCall {
  return { connector, method, args: shown(readArgs(argsText)) };
}

/**
 * The places where two argument texts differ, first ones first (object keys in sorted order,
 * array items by index), at most at most 20, with a total count.
 */
export function argumentDiff(
  recordedText: string,
  nowText: string,
): { differences: ArgumentDifference[]; total: number } {
  const differences: ArgumentDifference[] = [];
  let total = 0;
  const visit = (recorded: unknown, now: unknown, path: string, depth: number, has: [boolean, boolean]): void => {
    if (Object.is(recorded, now) && has[0] === has[1]) return;
    const bothContainers = isContainer(recorded) && isContainer(now) && Array.isArray(recorded) === Array.isArray(now);
    if (bothContainers && depth < MAX_DEPTH) {
      const keys = new Set([...Object.keys(recorded as object), ...Object.keys(now as object)]);
      const ordered = Array.isArray(recorded) ? [...keys].sort((a, b) => Number(a) - Number(b)) : [...keys].sort();
      for (const key of ordered) {
        const child = Array.isArray(recorded) ? `${path}[${key}]` : `${path}${propertyPath(key)}`;
        visit((recorded as Record<string, unknown>)[key], (now as Record<string, unknown>)[key], child, depth + 1, [
          Object.hasOwn(recorded as object, key),
          Object.hasOwn(now as object, key),
        ]);
      }
      return;
    }
    if (!bothContainers && sameLeaf(recorded, now) && has[0] === has[1]) return;
    total += 1;
    if (differences.length >= MAX_DIFFERENCES) return;
    const difference: ArgumentDifference = { path };
    if (has[0]) difference.recorded = shown(recorded);
    if (has[1]) difference.now = shown(now);
    differences.push(difference);
  };
  visit(readArgs(recordedText), readArgs(nowText), "", 0, [recordedText !== "", nowText !== ""]);
  return { differences, total };
}

/** A divergence with its sentence: `extra` is said after what differs. */
export function withMessage(fields: Omit<Divergence, "message">, extra = ""): Divergence {
  return { ...fields, message: divergenceMessage(fields, extra) };
}

/** The sentence of a divergence: what differs, and what to do about it. */
function divergenceMessage(divergence: Omit<Divergence, "message">, extra = ""): string {
  const where = `Replay diverged at seq ${divergence.seq}: `;
  const { recorded, now } = divergence;
  const name = (call: DivergentCall | undefined) => (call ? `${call.connector}.${call.method}` : "nothing");
  let what: string;
  switch (divergence.kind) {
    case "call":
      what = `the program called ${name(now)}(${preview(now?.args)}) where the log has ${name(recorded)}(${preview(recorded?.args)})`;
      break;
    case "arguments":
      what = `the program called ${name(now)} with ${preview(now?.args)} where the log has ${preview(recorded?.args)}${extra}`;
      break;
    case "schema":
      what = `the schema of ${name(recorded)} refuses the recorded arguments ${preview(recorded?.args)}: ${divergence.schemaError ?? "invalid"}`;
      break;
    case "missing-tool":
      what = `the log has ${name(recorded)}, which is not a configured tool any more`;
      break;
    case "ended":
      what = `the program ended before reaching it; the log has ${name(recorded)}(${preview(recorded?.args)})`;
      break;
  }
  return (
    `${where}${what}. Every pass must issue the same calls in the same order with the same arguments; ` +
    "wrap time, randomness and other values that change between runs in codemode.step(name, fn) so they are recorded once."
  );
}

function readArgs(text: string): unknown {
  try {
    return decodeDurable(text);
  } catch {
    return text;
  }
}

function isContainer(value: unknown): value is object {
  return typeof value === "object" && value !== null && (Array.isArray(value) || isPlain(value));
}

function isPlain(value: object): boolean {
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function sameLeaf(recorded: unknown, now: unknown): boolean {
  if (Object.is(recorded, now)) return true;
  if (typeof recorded !== typeof now) return false;
  if (typeof recorded === "bigint") return recorded === now;
  if (recorded instanceof Date && now instanceof Date) return recorded.getTime() === now.getTime();
  if (recorded instanceof Uint8Array && now instanceof Uint8Array)
    return recorded.length === now.length && recorded.every((byte, index) => byte === now[index]);
  return false;
}

function propertyPath(key: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
}

/** A value as a divergence shows it: strings and nested values clipped to `MAX_VALUE_CHARS`. */
function shown(value: unknown): unknown {
  if (typeof value === "string") return value.length > MAX_VALUE_CHARS ? `${value.slice(0, MAX_VALUE_CHARS)}…` : value;
  if (typeof value !== "object" || value === null) return value;
  const text = preview(value);
  return text.length > MAX_VALUE_CHARS ? `${text.slice(0, MAX_VALUE_CHARS)}…` : value;
}

function preview(value: unknown): string {
  if (value === undefined) return "no argument";
  let text: string;
  try {
    text =
      JSON.stringify(value, (_key, item: unknown) => (typeof item === "bigint" ? `${item}n` : item)) ?? String(value);
  } catch {
    text = String(value);
  }
  return text.length > MAX_VALUE_CHARS ? `${text.slice(0, MAX_VALUE_CHARS)}…` : text;
}
