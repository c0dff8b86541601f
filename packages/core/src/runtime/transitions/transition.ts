import { errorMessage } from "../../error-message.js";
import type { ExecutionHead, StoredEntry, StoredResult } from "../../log/interface.js";
import type { ExecutionLease } from "../../log/lease.js";
import type { LeaseFence } from "../../log/lock.js";
import type { ErrorCode, ExecutionEndStatus, ExecutionStatus } from "../../outcome.js";
import type { RuntimeContext } from "../context/index.js";
import { pendingSeqsOf } from "../records/index.js";
import { runDisposeHooks, runPassEndHooks } from "./hooks.js";

const TERMINAL: ReadonlySet<ExecutionStatus> = new Set(["completed", "error", "rejected", "rolled_back"]);

export function isTerminal(status: ExecutionStatus): status is ExecutionEndStatus {
  return TERMINAL.has(status);
}

/** What changes with a status, besides the status itself. */
interface StatusChange {
  /** The actions that wait for a person, for a pause (R-AP-8). */
  pendingSeqs?: number[];
  /** Why the run ended in error or was ended by someone. */
  error?: { message: string; code?: ErrorCode };
  /** Entries written in the same batch as the head (an approved or rejected action). */
  entries?: StoredEntry[];
  /** The final record of a pass. */
  result?: StoredResult;
  /**
   * Closes the pending action with this message when the run leaves `paused` for a terminal
   * status without a decision on it (expired, rolled back). The entry is read when not in `log`.
   */
  closePending?: string;
  /** The log as loaded, to find the pending entry without a read. */
  log?: ReadonlyMap<number, StoredEntry>;
  /** The pending actions `closePending` closes, when not the paused head's (a pass that was cancelled). */
  closeSeqs?: readonly number[];
}

/** The hooks a transition owes, run once the lease is free (see `afterTransition`). */
export type PendingHooks =
  | { kind: "pass-end"; status: "paused" | ExecutionEndStatus }
  | { kind: "dispose"; status: ExecutionEndStatus }
  | undefined;

/** The lease's side of a transition: its guarded writes and the fence its index rows carry. */
export type TransitionWriter = Pick<ExecutionLease, "write" | "fence">;

// The named transitions: each is one status change of an execution, written through the lease
// the caller holds, and returns the hooks it owes. They read alike on purpose: one small function
// per move names what happened where a change bag would not. A pass ends with `complete`, `fail` or
// `pause`; a person or an operator moves a run with `resume`, `reject`, `rollBack`, `expire` or
// `runAgain`.

/** A pass returned: the final record is kept with the head (R-DV-2 decides what fits). */
export async function complete(
  context: RuntimeContext,
  lease: TransitionWriter,
  head: ExecutionHead,
  result: StoredResult,
): Promise<PendingHooks> {
  await changeStatus(context, lease, head, "completed", { result });
  return { kind: "pass-end", status: "completed" };
}

/** A pass failed: the error, its code and the pass's console lines are kept. */
export async function fail(
  context: RuntimeContext,
  lease: TransitionWriter,
  head: ExecutionHead,
  error: { message: string; code?: ErrorCode },
  result: StoredResult,
): Promise<PendingHooks> {
  await changeStatus(context, lease, head, "error", { error, result });
  return { kind: "pass-end", status: "error" };
}

/** A pass could go no further than calls that need a person: `pendingSeqs` wait for decisions (R-AP-8). */
export async function pause(
  context: RuntimeContext,
  lease: TransitionWriter,
  head: ExecutionHead,
  pendingSeqs: number[],
): Promise<PendingHooks> {
  await changeStatus(context, lease, head, "paused", { pendingSeqs });
  return { kind: "pass-end", status: "paused" };
}

/** A person decided pending actions: the decided entries are written with the head, and a pass runs next. */
export async function resume(
  context: RuntimeContext,
  lease: TransitionWriter,
  head: ExecutionHead,
  decided: StoredEntry[],
): Promise<PendingHooks> {
  await changeStatus(context, lease, head, "running", { entries: decided });
  return undefined;
}

/** A denial the program did not catch ended it (R-AP-9): the run is `rejected`, as `reject` would leave it. */
export async function endDenied(
  context: RuntimeContext,
  lease: TransitionWriter,
  head: ExecutionHead,
  message: string,
  result: StoredResult,
): Promise<PendingHooks> {
  await changeStatus(context, lease, head, "rejected", { error: { message, code: "APPROVAL_DENIED" }, result });
  return { kind: "dispose", status: "rejected" };
}

/**
 * The run was cancelled (`runtime.cancel`): it ends `rejected` with code CANCELLED, the actions
 * waiting for a person (those of the paused head, or `pendingSeqs` a cancelled pass left) closed.
 */
export async function endCancelled(
  context: RuntimeContext,
  lease: TransitionWriter,
  head: ExecutionHead,
  message: string,
  extra: { log?: ReadonlyMap<number, StoredEntry>; pendingSeqs?: readonly number[]; result?: StoredResult } = {},
): Promise<PendingHooks> {
  await changeStatus(context, lease, head, "rejected", {
    error: { message, code: "CANCELLED" },
    closePending: `not run: the execution was ${message}`,
    ...(extra.log ? { log: extra.log } : {}),
    ...(extra.pendingSeqs ? { closeSeqs: extra.pendingSeqs } : {}),
    ...(extra.result ? { result: extra.result } : {}),
  });
  return { kind: "dispose", status: "rejected" };
}

/** How many earlier failures a rerun execution keeps in its head. */
export const RERUNS_KEPT = 10;

/**
 * An operator runs a failed execution again (`runtime.rerun`): back to `running` for a new pass,
 * its error moved to `reruns` (the last few are kept) and the failed pass's console lines cleared.
 * The log is not touched: what was recorded replays, a call left `executing` runs again (R-RP-4).
 */
export async function runAgain(
  context: RuntimeContext,
  lease: TransitionWriter,
  head: ExecutionHead,
): Promise<PendingHooks> {
  const failure = { at: Date.now(), error: head.error ?? "", ...(head.errorCode ? { code: head.errorCode } : {}) };
  head.reruns = [...(Array.isArray(head.reruns) ? head.reruns : []), failure].slice(-RERUNS_KEPT);
  delete head.error;
  delete head.errorCode;
  await changeStatus(context, lease, head, "running", { result: {} });
  return undefined;
}

/** A person rejected the pending action (R-AP-4): the closed entry carries who and why; the other pending actions close with it. */
export async function reject(
  context: RuntimeContext,
  lease: TransitionWriter,
  head: ExecutionHead,
  closed: StoredEntry,
): Promise<PendingHooks> {
  await changeStatus(context, lease, head, "rejected", {
    entries: [closed],
    closePending: `not run: the execution was rejected at seq ${closed.seq}`,
  });
  return { kind: "dispose", status: "rejected" };
}

/** Applied calls were reverted (R-RB-3): a paused run's pending action ends with it. */
export async function rollBack(
  context: RuntimeContext,
  lease: TransitionWriter,
  head: ExecutionHead,
  log: ReadonlyMap<number, StoredEntry>,
): Promise<PendingHooks> {
  await changeStatus(context, lease, head, "rolled_back", { closePending: "rolled back before approval", log });
  return { kind: "dispose", status: "rolled_back" };
}

/**
 * R-RE-2: a run nobody will finish ends. A paused one is `rejected` and its pending action
 * closed with `message`; any other (running: its host gone, or never started) ends in `error`.
 */
export async function expire(
  context: RuntimeContext,
  lease: TransitionWriter,
  head: ExecutionHead,
  message: string,
): Promise<PendingHooks> {
  if (head.status === "paused") {
    await changeStatus(context, lease, head, "rejected", { error: { message }, closePending: message });
    return { kind: "dispose", status: "rejected" };
  }
  await changeStatus(context, lease, head, "error", { error: { message, code: "SANDBOX_ERROR" } });
  return { kind: "dispose", status: "error" };
}

/**
 * The one status change under all of the above: the head (truth) with the entries that change
 * with it in one batch, then the listing, both written through the execution's lease, which the
 * caller holds (a holder that lost it writes nothing: BUSY). A listing that cannot be updated is
 * reported and repaired by its readers: the change happened (R-RT-4 keeps it one row's move,
 * whatever the store holds).
 */
async function changeStatus(
  context: RuntimeContext,
  lease: TransitionWriter,
  head: ExecutionHead,
  to: ExecutionStatus,
  change: StatusChange,
): Promise<void> {
  const previous = head.status;
  const now = Date.now();
  const entries = [...(change.entries ?? [])];
  if (change.closePending !== undefined) entries.push(...(await closedPending(context, head, change, entries, now)));
  head.status = to;
  head.updatedAt = now;
  delete head.pendingSeq;
  delete head.pendingSeqs;
  if (to === "paused" && change.pendingSeqs && change.pendingSeqs.length > 0) {
    head.pendingSeq = change.pendingSeqs[0];
    head.pendingSeqs = [...change.pendingSeqs];
  }
  if (change.error) {
    head.error = change.error.message;
    if (change.error.code) head.errorCode = change.error.code;
  }
  const extra: { entries?: StoredEntry[]; result?: StoredResult } = {};
  if (entries.length > 0) extra.entries = entries;
  if (change.result) extra.result = change.result;
  await context.store.writeHead(lease, head, extra);
  await updateListing(context, head, previous, lease.fence);
}

/** The pending actions a run that leaves `paused` without deciding them closes with `closePending`. */
async function closedPending(
  context: RuntimeContext,
  head: ExecutionHead,
  change: StatusChange,
  written: readonly StoredEntry[],
  now: number,
): Promise<StoredEntry[]> {
  const seqs = (change.closeSeqs ?? pendingSeqsOf(head)).filter((seq) => !written.some((entry) => entry.seq === seq));
  const unread = seqs.filter((seq) => !change.log?.has(seq));
  const read = unread.length > 0 ? await context.store.readEntries(head.id, unread) : [];
  const found = seqs.map((seq) => change.log?.get(seq) ?? read[unread.indexOf(seq)]);
  return found.flatMap((pending) =>
    pending?.state === "pending"
      ? [{ ...pending, state: "error" as const, error: change.closePending as string, endedAt: now }]
      : [],
  );
}

/** Lists a new execution, which is stored first (R-RE-1). */
export async function listNew(context: RuntimeContext, head: ExecutionHead): Promise<void> {
  await context.index.put({ id: head.id, status: head.status, createdAt: head.createdAt, updatedAt: head.updatedAt });
}

async function updateListing(
  context: RuntimeContext,
  head: ExecutionHead,
  previous: ExecutionStatus | undefined,
  fence: LeaseFence,
): Promise<void> {
  try {
    await context.index.put(
      { id: head.id, status: head.status, createdAt: head.createdAt, updatedAt: head.updatedAt },
      previous,
      fence,
    );
  } catch (error) {
    context.warn(
      `execution ${head.id} is ${head.status}, but its listing could not be updated (readers repair it): ${errorMessage(error)}`,
    );
  }
}

/** Runs the hooks a transition owes. Called once the record is written and the lease is free. */
export async function afterTransition(
  context: RuntimeContext,
  executionId: string,
  hooks: PendingHooks,
): Promise<void> {
  if (!hooks) return;
  if (hooks.kind === "pass-end") await runPassEndHooks(context.connectors, context.warn, executionId, hooks.status);
  else await runDisposeHooks(context.connectors, context.warn, executionId, hooks.status);
}
