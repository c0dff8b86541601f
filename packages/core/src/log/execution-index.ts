import type { ExecutionStatus } from "../outcome.js";
import type { LeaseFence } from "./lock.js";

/**
 * The listing of executions: which exist, in which status, newest first. It serves
 * `executions`, `pending`, retention, expiry and recovery. It is never the truth about an
 * execution (its head is): a row may lag behind a status change that crashed halfway, and
 * readers check rows against heads and repair them.
 *
 * R-RT-4: no operation may rewrite a structure that every execution shares, or take a lock
 * that every execution shares; a status change costs a fixed number of round trips however many
 * executions the store holds, and a listing page costs O(page).
 *
 * A store may implement this natively (a Redis sorted set, a SQL table with an index) and hand
 * it to the runtime as `storage.index`; without one the runtime uses a generic implementation
 * over any Keyv store (`createKeyvExecutionIndex`).
 */
export interface ExecutionIndex {
  /**
   * Records that an execution is now in `row.status`. `previous` is the status it was listed
   * under before (absent for a new execution): its row there is removed. Idempotent: putting
   * the same row twice, or with a `previous` it was never listed under, is harmless.
   *
   * With `fence`, the write is made by the holder of the execution's lease: a store that keeps
   * leases beside the index writes nothing once that lease no longer holds its key, checked in
   * the same operation (the row of a lapsed holder would list a status the run has left). A
   * store that cannot check it atomically writes anyway: readers repair rows from heads.
   */
  put(row: IndexRow, previous?: ExecutionStatus, fence?: LeaseFence): Promise<void>;
  /** Removes an execution's row (the status it is listed under is given). Idempotent. */
  remove(row: Pick<IndexRow, "id" | "status" | "createdAt">): Promise<void>;
  /**
   * One page of rows ordered by (createdAt, id): descending for "newest" (the default),
   * ascending for "oldest". `statuses` filters (all statuses when absent). `after` is the last
   * row of the previous page in the same order: the page starts strictly after it.
   * Costs O(limit), independent of how many executions are stored.
   */
  list(query: IndexQuery): Promise<IndexRow[]>;
  /** How many rows are listed under each of `statuses` (for retention). O(1) per status or close to it. */
  count(statuses: readonly ExecutionStatus[]): Promise<number>;
}

/** One execution as the index lists it. */
export interface IndexRow {
  id: string;
  status: ExecutionStatus;
  createdAt: number;
  updatedAt: number;
}

export interface IndexQuery {
  statuses?: readonly ExecutionStatus[];
  limit: number;
  order?: "newest" | "oldest";
  after?: { createdAt: number; id: string };
}

/**
 * What a store offers to list executions natively. The runtime calls `forRuntime(name)` once per
 * runtime name: runtimes sharing a store keep separate listings.
 */
export interface ExecutionIndexProvider {
  forRuntime(runtimeName: string): ExecutionIndex;
}

export const ALL_STATUSES: readonly ExecutionStatus[] = [
  "running",
  "paused",
  "completed",
  "error",
  "rejected",
  "rolled_back",
];
export const TERMINAL_STATUSES: readonly ExecutionStatus[] = ["completed", "error", "rejected", "rolled_back"];

/** Orders rows as the index does: by createdAt, then id. Negative when `a` is older. */
export function compareRows(a: { createdAt: number; id: string }, b: { createdAt: number; id: string }): number {
  if (a.createdAt !== b.createdAt) return a.createdAt - b.createdAt;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}
