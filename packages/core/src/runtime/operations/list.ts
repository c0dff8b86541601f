import { errorMessage } from "../../error-message.js";
import { ALL_STATUSES, type IndexRow } from "../../log/execution-index.js";
import type { ExecutionHead } from "../../log/interface.js";
import type { ExecutionState, ExecutionStatus, PendingAction } from "../../outcome.js";
import type { RuntimeContext } from "../context/index.js";
import { pendingActionOf } from "../passes/index.js";
import { type ExecutionSummary, pendingSeqsOf, toExecutionState, toLogEntries, toSummary } from "../records/index.js";
import { asStorageError } from "../transitions/index.js";
import { decodeCursor, encodeCursor } from "./cursor.js";

/** One page of a listing; `cursor` is absent on the last page. */
export interface Page<T> {
  items: T[];
  cursor?: string;
}

export interface ListQuery {
  /** Only executions in this status (or these). Default: all. */
  status?: ExecutionStatus | readonly ExecutionStatus[];
  /** Items per page, 1–1,000. Default 50. */
  limit?: number;
  /** The `cursor` of the previous page. */
  cursor?: string;
}

export interface PendingQuery {
  /** Only this execution's pending actions. */
  executionId?: string;
  limit?: number;
  cursor?: string;
}

const DEFAULT_LIMIT = 50;
/**
 * How old a listing row without a record must be before a reader drops it: longer than any
 * write of a new execution can take (a store that is failing answers within seconds).
 */
export const ORPHAN_ROW_GRACE_MS = 60_000;
/** Reads beyond a short page when rows turned out stale, before giving the page as it is. */
const MAX_EXTRA_READS = 8;

/**
 * Executions, newest first, as summaries (no log: `execution(id)` has it). Costs O(page), not
 * O(history) (R-RT-4). Rows that lag behind their head (a change that crashed halfway) are
 * repaired as they are met. A store failure rejects with STORAGE_ERROR (R-RT-3).
 */
export async function listExecutions(context: RuntimeContext, query: ListQuery = {}): Promise<Page<ExecutionSummary>> {
  const statuses = statusesOf(query.status);
  const page = await readPage(context, statuses, limitOf(query.limit), afterOf(query.cursor));
  return withCursor(page.heads.map(toSummary), page.cursor);
}

/**
 * Pending actions of paused executions, newest first; or of one execution. A page holds `limit`
 * paused runs, each with every action it waits on (R-AP-8).
 */
export async function listPending(context: RuntimeContext, query: PendingQuery = {}): Promise<Page<PendingAction>> {
  // Host programming errors (a bad limit or cursor) throw as such, before any store work.
  const limit = limitOf(query.limit);
  const after = afterOf(query.cursor);
  try {
    if (query.executionId !== undefined) {
      const head = await context.store.readHead(String(query.executionId));
      return { items: head?.status === "paused" ? await pendingActions(context, [head]) : [] };
    }
    const page = await readPage(context, ["paused"], limit, after);
    return withCursor(await pendingActions(context, page.heads), page.cursor);
  } catch (error) {
    throw asStorageError("could not list pending actions", error);
  }
}

/** One execution with its log, or null when there is none. */
export async function readExecution(context: RuntimeContext, executionId: string): Promise<ExecutionState | null> {
  try {
    const head = await context.store.readHead(String(executionId));
    if (!head) return null;
    const { code, log } = await context.store.readCodeAndLog(head);
    const stored = await context.store.readResult(head.id);
    return toExecutionState(head, code, toLogEntries(log), stored);
  } catch (error) {
    throw asStorageError(`could not read execution ${String(executionId)}`, error);
  }
}

async function pendingActions(context: RuntimeContext, heads: ExecutionHead[]): Promise<PendingAction[]> {
  // Every action a paused run waits on (R-AP-8), in the order they paused.
  const refs = heads.flatMap((head) => pendingSeqsOf(head).map((seq) => ({ executionId: head.id, seq })));
  const entries = await context.store.readEntriesAt(refs);
  const actions: PendingAction[] = [];
  refs.forEach((ref, position) => {
    const entry = entries[position];
    if (entry?.state === "pending") actions.push(pendingActionOf(context, ref.executionId, entry));
  });
  return actions;
}

/** Reads rows and their heads until `limit` current ones are found or the rows run out. */
async function readPage(
  context: RuntimeContext,
  statuses: readonly ExecutionStatus[],
  limit: number,
  start: Position | undefined,
): Promise<{ heads: ExecutionHead[]; cursor?: string }> {
  let after = start;
  const heads: ExecutionHead[] = [];
  try {
    for (let read = 0; read <= MAX_EXTRA_READS; read++) {
      const wanted = limit - heads.length;
      const rows = await context.index.list({ statuses, limit: wanted, ...(after ? { after } : {}) });
      const found = await context.store.readHeads(rows.map((row) => row.id));
      const repairs: Array<Promise<void>> = [];
      rows.forEach((row, position) => {
        const head = found[position];
        if (head?.status !== row.status) repairs.push(repairRow(context, row, head));
        if (head && statuses.includes(head.status)) heads.push(head);
      });
      await Promise.all(repairs);
      // Fewer rows than asked for: the listing has no more.
      if (rows.length < wanted) return { heads };
      const last = rows[rows.length - 1] as IndexRow;
      after = { createdAt: last.createdAt, id: last.id };
      if (heads.length >= limit) break;
    }
  } catch (error) {
    throw asStorageError("could not list executions", error);
  }
  return after ? { heads, cursor: encodeCursor(after) } : { heads };
}

/**
 * Sets right a row that lags behind its head (a change that crashed between the head and the
 * listing), or drops a row whose execution is gone. Best effort: the page is right either way.
 */
async function repairRow(context: RuntimeContext, row: IndexRow, head: ExecutionHead | undefined): Promise<void> {
  try {
    if (!head) {
      // A new execution is listed before its record is written (execute.ts, storeNew): a row
      // without one is dropped only once no write of it can still be under way.
      if (Date.now() - row.createdAt > ORPHAN_ROW_GRACE_MS) await context.index.remove(row);
    } else
      await context.index.put(
        { id: head.id, status: head.status, createdAt: head.createdAt, updatedAt: head.updatedAt },
        row.status,
      );
  } catch (error) {
    context.warn(`could not repair the listing row of execution ${row.id}: ${errorMessage(error)}`);
  }
}

type Position = { createdAt: number; id: string };

function afterOf(cursor: string | undefined): Position | undefined {
  return cursor === undefined ? undefined : decodeCursor(cursor);
}

function withCursor<T>(items: T[], cursor: string | undefined): Page<T> {
  return cursor === undefined ? { items } : { items, cursor };
}

function statusesOf(status: ListQuery["status"]): readonly ExecutionStatus[] {
  if (status === undefined) return ALL_STATUSES;
  const list = typeof status === "string" ? [status] : [...status];
  for (const value of list) {
    if (!ALL_STATUSES.includes(value))
      throw new TypeError(`status ${JSON.stringify(value)} is not one of ${ALL_STATUSES.join(", ")}`);
  }
  return list;
}

function limitOf(limit: number | undefined): number {
  if (limit === undefined) return DEFAULT_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000)
    throw new TypeError(`limit must be a whole number from 1 to 1,000 (got ${String(limit)})`);
  return limit;
}
