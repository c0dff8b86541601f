import type { ExecutionStatus } from "../outcome.js";
import { ALL_STATUSES, type IndexQuery, type IndexRow } from "./execution-index.js";

// Checks of what callers hand an execution index: statuses become keys and table values, times
// decide keys (millisecond timestamps, which every store can order exactly), so bad input is a
// TypeError before any store work. The generic index and the stores' native ones share them
// (`@codemode/core/store`).

/** A listing query with its defaults filled in and its values checked. */
export interface PageQuery {
  /** Distinct statuses to list, in `ALL_STATUSES` order. */
  statuses: ExecutionStatus[];
  limit: number;
  order: "newest" | "oldest";
  after: { createdAt: number; id: string } | undefined;
}

/** Fills in a query's defaults (every status, newest first) and checks what it was given. */
export function checkQuery(query: IndexQuery): PageQuery {
  const wanted = query.statuses ?? ALL_STATUSES;
  for (const status of wanted) checkStatus(status);
  if (!Number.isSafeInteger(query.limit) || query.limit < 0)
    throw new TypeError(`limit must be a non-negative integer (got ${JSON.stringify(query.limit)})`);
  const order = query.order ?? "newest";
  if (order !== "newest" && order !== "oldest")
    throw new TypeError(`order must be "newest" or "oldest" (got ${JSON.stringify(order)})`);
  if (query.after !== undefined) {
    // A cursor is a position, not a row: any string id will do, the empty one included.
    if (typeof query.after.id !== "string")
      throw new TypeError(`after.id must be a string (got ${JSON.stringify(query.after.id)})`);
    checkTime("after.createdAt", query.after.createdAt);
  }
  return {
    statuses: ALL_STATUSES.filter((status) => wanted.includes(status)),
    limit: query.limit,
    order,
    after: query.after,
  };
}

/** Statuses become keys and times decide keys, so only the six statuses and ms timestamps pass. */
export function checkRow(row: Pick<IndexRow, "id" | "status" | "createdAt"> & { updatedAt?: number }): void {
  if (typeof row.id !== "string" || row.id.length === 0)
    throw new TypeError(`an index row needs an id (got ${JSON.stringify(row.id)})`);
  checkStatus(row.status);
  checkTime("createdAt", row.createdAt);
  if (row.updatedAt !== undefined) checkTime("updatedAt", row.updatedAt);
}

function checkTime(field: string, value: unknown): void {
  if (!isTime(value)) throw new TypeError(`${field} must be a millisecond timestamp (got ${JSON.stringify(value)})`);
}

export function checkStatus(status: unknown): asserts status is ExecutionStatus {
  if (!ALL_STATUSES.includes(status as ExecutionStatus))
    throw new TypeError(`not an execution status: ${JSON.stringify(status)}`);
}

export function isTime(value: unknown): value is number {
  return Number.isSafeInteger(value) && (value as number) >= 0;
}
