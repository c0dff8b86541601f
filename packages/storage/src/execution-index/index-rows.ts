import { ALL_STATUSES, compareRows, type IndexQuery, type IndexRow } from "@codemode/core/store";

type ExecutionStatus = IndexRow["status"];

/** A listing query with its defaults filled in and its values checked. */
export interface PageQuery {
  /** Distinct statuses to list, in `ALL_STATUSES` order. */
  statuses: ExecutionStatus[];
  limit: number;
  order: "newest" | "oldest";
  after: { createdAt: number; id: string } | undefined;
}

/**
 * Checks a row before it is stored. Statuses become key and table values, so only the known six
 * pass; times are millisecond timestamps (non-negative safe integers), which every store can
 * order exactly (Redis keeps them in a fixed-width key).
 */
export function checkRow(row: Pick<IndexRow, "id" | "status" | "createdAt"> & { updatedAt?: number }): void {
  if (typeof row.id !== "string" || row.id.length === 0)
    throw new TypeError(`an index row needs an id (got ${JSON.stringify(row.id)})`);
  checkStatus(row.status);
  checkTime("createdAt", row.createdAt);
  if (row.updatedAt !== undefined) checkTime("updatedAt", row.updatedAt);
}

export function checkStatus(status: unknown): asserts status is ExecutionStatus {
  if (!ALL_STATUSES.includes(status as ExecutionStatus))
    throw new TypeError(`not an execution status: ${JSON.stringify(status)}`);
}

function checkTime(field: string, value: unknown): void {
  if (!Number.isSafeInteger(value) || (value as number) < 0)
    throw new TypeError(`${field} must be a millisecond timestamp (got ${JSON.stringify(value)})`);
}

/** Fills in a query's defaults (every status, newest first) and checks what it was given. */
export function pageQuery(query: IndexQuery): PageQuery {
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

/**
 * One page out of the pages read per status (each already in `order` and at most `limit` long):
 * merged, in order, cut to `limit`. Costs O(statuses × limit).
 */
export function mergePages(pages: readonly IndexRow[][], order: "newest" | "oldest", limit: number): IndexRow[] {
  const rows = pages.flat();
  rows.sort(order === "newest" ? (a, b) => compareRows(b, a) : compareRows);
  return rows.slice(0, limit);
}

/** Runtime names become part of keys; the runtime allows the same characters. */
export function checkRuntimeName(runtimeName: string): string {
  if (typeof runtimeName !== "string" || !/^[\w.-]{1,64}$/.test(runtimeName)) {
    throw new TypeError(
      `runtime name must be 1–64 letters, digits, "_", "-" or "." (got ${JSON.stringify(runtimeName)})`,
    );
  }
  return runtimeName;
}
