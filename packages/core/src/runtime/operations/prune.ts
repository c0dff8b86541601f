import { errorMessage } from "../../error-message.js";
import { TERMINAL_STATUSES } from "../../log/execution-index.js";
import { withLease } from "../../log/lease.js";
import type { RuntimeContext } from "../context/index.js";
import { asStorageError, isTerminal } from "../transitions/index.js";

/** How many executions one prune deletes at most; the next one continues. */
const PRUNE_BATCH = 100;

/**
 * R-RE-1: deletes terminal executions beyond the newest `keep`, with their logs, oldest first.
 * It counts the terminal rows and reads only the oldest surplus: its cost follows what it
 * deletes, not how many executions the store holds (R-RT-4). Running and paused executions are
 * never pruned. Each is deleted under its own lease, so a rollback running on it finishes
 * first; one that stays busy is left for the next prune.
 */
export async function pruneTerminal(context: RuntimeContext, keep: number): Promise<number> {
  const surplus = (await context.index.count(TERMINAL_STATUSES)) - Math.max(0, Math.floor(keep));
  if (surplus <= 0) return 0;
  const doomed = await context.index.list({
    statuses: TERMINAL_STATUSES,
    order: "oldest",
    limit: Math.min(surplus, PRUNE_BATCH),
  });
  let removed = 0;
  for (const row of doomed) {
    const deleted = await withLease(context.leases, row.id, 0, async () => {
      const head = await context.store.readHead(row.id);
      if (head && !isTerminal(head.status)) {
        // The listing lagged behind a change: set it right instead of deleting a live run.
        await context.index.put(
          { id: head.id, status: head.status, createdAt: head.createdAt, updatedAt: head.updatedAt },
          row.status,
        );
        return false;
      }
      if (head) await context.store.deleteExecution(head);
      await context.index.remove(row);
      return true;
    });
    if (deleted) removed += 1;
  }
  return removed;
}

/**
 * Retention after a new execution (R-RE-1), one round at a time per runtime: concurrent
 * executions that each pruned on their own listed and fought over the same oldest rows, so
 * pruning cost grew with the square of the executions in flight. A prune asked for while a round
 * runs is folded into the one round queued after it, which starts after that execution was
 * stored. A caller waits for that round at most, never for the rounds later executions ask for:
 * under steady load, rounds follow each other without end, and an execution that waited for all
 * of them would return seconds after its pass ended.
 */
export function pruneAfterExecute(context: RuntimeContext): Promise<void> {
  let state = pruning.get(context);
  if (!state) {
    state = { running: undefined, next: undefined };
    pruning.set(context, state);
  }
  const { running } = state;
  if (!running) return startRound(context, state);
  const current = state;
  current.next ??= running.then(() => {
    current.next = undefined;
    return startRound(context, current);
  });
  return current.next;
}

function startRound(context: RuntimeContext, state: PruneState): Promise<void> {
  const round = pruneRound(context).finally(() => {
    if (state.running === round) state.running = undefined;
  });
  state.running = round;
  return round;
}

async function pruneRound(context: RuntimeContext): Promise<void> {
  try {
    await pruneTerminal(context, context.settings.maxExecutions);
  } catch (error) {
    context.warn(`pruning failed: ${errorMessage(error)}`);
  }
}

interface PruneState {
  /** The round running now. */
  running: Promise<void> | undefined;
  /** The one round queued after it, shared by everyone who asked meanwhile. */
  next: Promise<void> | undefined;
}

const pruning = new WeakMap<RuntimeContext, PruneState>();

/** `runtime.pruneExecutions`: a store failure rejects with STORAGE_ERROR (R-RT-3). */
export async function pruneExecutions(context: RuntimeContext, keep: number): Promise<number> {
  try {
    return await pruneTerminal(context, keep);
  } catch (error) {
    throw asStorageError("could not prune executions", error);
  }
}
