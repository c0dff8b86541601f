import type { StoredEntry } from "../../log/execution-store.js";
import { withLease } from "../../log/lease.js";
import { CodemodeError } from "../../outcome.js";
import type { RuntimeContext } from "../context.js";
import { asStorageError } from "../failure.js";
import { decisionOf } from "../log-view.js";
import { afterTransition, hooksFor, transition } from "../transition.js";

/**
 * Rejects the pending action: the execution ends `rejected` (R-AP-4) with who and why on the
 * entry. False, changing nothing, when that action is not pending any more (or never was).
 * Rejects with `CodemodeError` BUSY when the execution stayed held, and STORAGE_ERROR when the
 * store fails: an outage is never "not pending" (R-RT-3).
 */
export async function reject(
  context: RuntimeContext,
  input: { executionId: string; seq: number; by?: string; reason?: string },
): Promise<boolean> {
  const executionId = typeof input?.executionId === "string" ? input.executionId : "";
  if (!executionId || typeof input.seq !== "number") return false;
  let rejected = false;
  try {
    const done = await withLease(context.leases, executionId, context.settings.lockWaitMs, async (lease) => {
      const head = await context.store.readHead(executionId);
      if (head?.status !== "paused" || head.pendingSeq !== input.seq) return false;
      const [entry] = await context.store.readEntries(executionId, [input.seq]);
      if (entry?.state !== "pending") return false;
      const decision = decisionOf(false, input.by, input.reason);
      const closed: StoredEntry = {
        ...entry,
        state: "error",
        error: `rejected${input.by ? ` by ${input.by}` : ""}${input.reason ? `: ${input.reason}` : ""}`,
        decision,
        endedAt: decision.at,
      };
      await transition(context, lease, head, "rejected", { entries: [closed] });
      await lease.release();
      rejected = true;
      return true;
    });
    if (done === null)
      throw new CodemodeError(
        "BUSY",
        `execution ${executionId} is busy (a pass or another control operation holds it); try again`,
      );
  } catch (error) {
    throw asStorageError(`could not reject the action of execution ${executionId}`, error);
  }
  if (rejected) await afterTransition(context, executionId, hooksFor("rejected", false));
  return rejected;
}
