// What the kv-execution-index tests share, never exported by the package: the time they start at,
// the page a listing must answer, and a look at the index's keys in a store.
import type Keyv from "keyv";
import { ALL_STATUSES, compareRows, type ExecutionIndex, type IndexQuery, type IndexRow } from "./execution-index.js";

export const HOUR = 3_600_000;
export const BASE = Date.UTC(2025, 0, 1);

/** What a page must be, computed from every row at once. */
export function expectedPage(rows: IndexRow[], query: IndexQuery): IndexRow[] {
  const direction = query.order === "oldest" ? 1 : -1;
  return rows
    .filter((row) => (query.statuses ?? ALL_STATUSES).includes(row.status))
    .filter((row) => query.after === undefined || direction * compareRows(row, query.after) > 0)
    .sort((a, b) => direction * compareRows(a, b))
    .slice(0, query.limit);
}

/** Puts the rows 200 at a time, as many writers at once would. */
export async function putAll(index: ExecutionIndex, rows: IndexRow[]): Promise<void> {
  for (let start = 0; start < rows.length; start += 200)
    await Promise.all(rows.slice(start, start + 200).map((row) => index.put(row)));
}

/** The index's keys in an in-memory Keyv, and nothing else stored there. */
export function indexKeys(keyv: Keyv): string[] {
  return [...(keyv.store as Map<string, unknown>).keys()].filter((key) => key.includes(":x:"));
}
