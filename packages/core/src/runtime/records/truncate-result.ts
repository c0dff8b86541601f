import { valueCodec } from "../../sandbox/prelude/value-codec.js";

/**
 * Shrinks a result for the model while keeping valid data of the same shape: long strings are
 * cut (with a note of how much was cut), long arrays keep their first items, objects with very
 * many keys keep their first keys. Use it as `transformResult`; the record keeps the raw value.
 *
 * @example
 * createCodemodeRuntime({ transformResult: (result) => truncateResult(result, { maxChars: 20_000 }) });
 */
export function truncateResult(value: unknown, options: { maxChars: number }): unknown {
  const maxChars = Math.max(16, Math.floor(options.maxChars));
  if (size(value) <= maxChars) return value;
  // Try ever tighter caps until the value fits; each cap keeps the shape.
  for (let cap = Math.max(8, Math.floor(maxChars / 2)); cap >= 1; cap = Math.floor(cap / 2)) {
    const shrunk = shrink(value, cap, 0);
    if (size(shrunk) <= maxChars) return shrunk;
  }
  return shrink(value, 0, 0);
}

function size(value: unknown): number {
  try {
    return valueCodec.encode(value)?.length ?? 0;
  } catch {
    return Number.POSITIVE_INFINITY;
  }
}

function shrink(value: unknown, cap: number, depth: number): unknown {
  if (typeof value === "string") {
    const keep = Math.max(cap, 0);
    return value.length > keep + 32 ? `${value.slice(0, keep)}… [${value.length - keep} more characters]` : value;
  }
  if (value === null || typeof value !== "object" || value instanceof Uint8Array) return value;
  if (depth > 64) return Array.isArray(value) ? [] : {};
  const items = Math.max(cap === 0 ? 0 : 1, Math.ceil(cap / 16));
  if (Array.isArray(value)) return value.slice(0, items).map((item) => shrink(item, cap, depth + 1));
  const entries = Object.entries(value as Record<string, unknown>);
  const keys = Math.max(items, 8);
  return Object.fromEntries(entries.slice(0, keys).map(([key, item]) => [key, shrink(item, cap, depth + 1)]));
}
