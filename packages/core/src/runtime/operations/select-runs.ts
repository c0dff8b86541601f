import { ALL_STATUSES } from "../../log/execution-index.js";
import type { ExecutionHead } from "../../log/interface.js";
import type { ExecutionStatus } from "../../outcome.js";
import type { RuntimeContext } from "../context/index.js";
import { asStorageError } from "../transitions/index.js";

// Which stored runs a bulk operation (replayCheck, rerun) takes: by status, age and count,
// newest first, read page by page from the listing and confirmed against each head.

/** A query as the bulk operations take it. */
export interface RunQuery {
  status?: ExecutionStatus | readonly ExecutionStatus[];
  /** Only runs created at or after this time (ms since the epoch, or a Date). */
  since?: number | Date;
  /** At most this many runs, 1–1,000. Default 100. */
  limit?: number;
}

/** A query once checked: what the listing is asked for. */
export interface RunSelection {
  statuses: ExecutionStatus[];
  since: number;
  limit: number;
}

export const DEFAULT_RUN_LIMIT = 100;
export const MAX_RUN_LIMIT = 1_000;
const PAGE = 100;

/**
 * Checks a query from plain JavaScript; `operation` names the method in the TypeError, and
 * `statuses` are the ones it accepts (default all), `defaultStatus` what it takes without one.
 */
export function checkRunQuery(
  operation: string,
  query: RunQuery,
  defaultStatus: ExecutionStatus,
  statuses: readonly ExecutionStatus[] = ALL_STATUSES,
): RunSelection {
  if (typeof query !== "object" || query === null)
    throw new TypeError(`${operation}: the query must be an object { status?, since?, limit? }`);
  const picked = query.status === undefined ? [defaultStatus] : [query.status].flat();
  for (const status of picked)
    if (!statuses.includes(status))
      throw new TypeError(`${operation}: status must be one of ${statuses.join(", ")}; got ${String(status)}`);
  const since = query.since instanceof Date ? query.since.getTime() : (query.since ?? 0);
  if (typeof since !== "number" || !Number.isFinite(since))
    throw new TypeError(`${operation}: since must be a time in ms since the epoch, or a Date`);
  const limit = query.limit ?? DEFAULT_RUN_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_RUN_LIMIT)
    throw new TypeError(`${operation}: limit must be an integer from 1 to ${MAX_RUN_LIMIT}; got ${String(limit)}`);
  return { statuses: picked, since, limit };
}

/**
 * The heads a selection picks, newest first: listed under one of its statuses, created at or
 * after `since`, whose head still has such a status and passes `keep`; at most `limit`. A store
 * failure rejects with STORAGE_ERROR (R-RT-3).
 */
export async function selectRuns(
  context: RuntimeContext,
  selection: RunSelection,
  keep: (head: ExecutionHead) => boolean = () => true,
): Promise<ExecutionHead[]> {
  const heads: ExecutionHead[] = [];
  let after: { createdAt: number; id: string } | undefined;
  while (heads.length < selection.limit) {
    const rows = await readStore("could not list executions", () =>
      context.index.list({ statuses: selection.statuses, order: "newest", limit: PAGE, ...(after ? { after } : {}) }),
    );
    const recent = rows.filter((row) => row.createdAt >= selection.since);
    const found = await readStore("could not read executions", () =>
      context.store.readHeads(recent.map((row) => row.id)),
    );
    for (const head of found) {
      if (heads.length >= selection.limit) break;
      if (head && selection.statuses.includes(head.status) && keep(head)) heads.push(head);
    }
    const last = rows[rows.length - 1];
    if (rows.length < PAGE || !last || last.createdAt < selection.since) break;
    after = { createdAt: last.createdAt, id: last.id };
  }
  return heads;
}

/** A read of the store whose failure is STORAGE_ERROR with `what` (R-RT-3). */
export async function readStore<T>(what: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw asStorageError(what, error);
  }
}
