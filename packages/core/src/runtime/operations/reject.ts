import type { StoredEntry } from "../../log/interface.js";
import type { RuntimeContext } from "../context/index.js";
import { decisionOf, pendingSeqsOf } from "../records/index.js";
import { reject as rejectRun } from "../transitions/index.js";
import { controlStep } from "./control-step.js";

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
  return controlStep(context, executionId, { doing: "reject the action of" }, async ({ head, lease, owe }) => {
    if (head?.status !== "paused" || !pendingSeqsOf(head).includes(input.seq)) return false;
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
    owe(await rejectRun(context, lease, head, closed));
    return true;
  });
}
