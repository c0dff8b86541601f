import type { ExecutionStatus } from "../outcome.js";
import { ALL_STATUSES, type IndexQuery, type IndexRow } from "./execution-index.js";

// Checks of what callers hand the generic execution index: statuses become keys and times decide
// keys, so bad input is a TypeError before any store work.

export function checkQuery(query: IndexQuery) {
  const wanted = query.statuses ?? ALL_STATUSES;
  for (const status of wanted) checkStatus(status);
  if (!Number.isSafeInteger(query.limit) || query.limit < 0)
    throw new TypeError(`limit must be a non-negative integer (got ${JSON.stringify(query.limit)})`);
  const order = query.order ?? "newest";
  if (order !== "newest" && order !== "oldest")
    throw new TypeError(`order must be "newest" or "oldest" (got ${JSON.stringify(order)})`);
  if (query.after !== undefined) checkRow({ id: query.after.id, status: "running", createdAt: query.after.createdAt });
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
  if (!isTime(row.createdAt))
    throw new TypeError(`createdAt must be a millisecond timestamp (got ${JSON.stringify(row.createdAt)})`);
  if (row.updatedAt !== undefined && !isTime(row.updatedAt))
    throw new TypeError(`updatedAt must be a millisecond timestamp (got ${JSON.stringify(row.updatedAt)})`);
}

export function checkStatus(status: unknown): asserts status is ExecutionStatus {
  if (!ALL_STATUSES.includes(status as ExecutionStatus))
    throw new TypeError(`not an execution status: ${JSON.stringify(status)}`);
}

export function isTime(value: unknown): value is number {
  return Number.isSafeInteger(value) && (value as number) >= 0;
}
