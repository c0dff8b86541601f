import { setTimeout as sleep } from "node:timers/promises";
import type { CancelRequest } from "../../log/execution-store.js";
import { CodemodeError, type ExecutionStatus } from "../../outcome.js";
import type { RuntimeContext } from "../context/index.js";
import { cancelMessage } from "../passes/index.js";
import { endCancelled, isTerminal } from "../transitions/index.js";
import { controlStep } from "./control-step.js";

export interface CancelInput {
  executionId: string;
  /** Who cancelled, for the audit trail (kept up to 1,000 characters). */
  by?: string;
  /** Why (kept up to 1,000 characters). */
  reason?: string;
  /**
   * How long to wait for a pass running in another process to stop. Default: the runtime's
   * `lockWaitMs`. Past it the answer is `requested`: the pass stops when it reads the request.
   */
  waitMs?: number;
}

/**
 * What `cancel` did:
 * - `cancelled`: the run has ended `rejected` with code CANCELLED (it was paused, its pass
 *   stopped, or nobody ran it);
 * - `requested`: a pass in another process still runs it; it reads the request within about a
 *   second and stops, and the run ends as above;
 * - `ended`: the run had ended already (`status` says how); nothing changed;
 * - `not_found`: no such execution.
 */
export interface CancelReport {
  executionId: string;
  result: "cancelled" | "requested" | "ended" | "not_found";
  /** The run's status when the answer was given (absent for `not_found`). */
  status?: ExecutionStatus;
}

/** How often `cancel` looks again at a run whose pass runs elsewhere. */
const RECHECK_MS = 100;
const MAX_TEXT = 1_000;

/**
 * Cancels a run wherever it stands: a paused run is rejected with its waiting actions closed; a
 * running pass is stopped (the sandbox torn down, tool calls told through their signal) and the
 * run rejected; a run whose host is gone is rejected at once. Everything is done under the run's
 * lease, so a cancel and a decision never both apply. Rejects with `CodemodeError`
 * STORAGE_ERROR when the store fails: an outage is never "not found".
 */
export async function cancel(context: RuntimeContext, input: CancelInput): Promise<CancelReport> {
  const executionId = typeof input?.executionId === "string" ? input.executionId : "";
  if (!executionId) return { executionId, result: "not_found" };
  const request: CancelRequest = {
    at: Date.now(),
    ...(typeof input.by === "string" && input.by ? { by: input.by.slice(0, MAX_TEXT) } : {}),
    ...(typeof input.reason === "string" && input.reason ? { reason: input.reason.slice(0, MAX_TEXT) } : {}),
  };
  const waitMs = typeof input.waitMs === "number" && input.waitMs >= 0 ? input.waitMs : context.settings.lockWaitMs;
  const until = Date.now() + waitMs;
  // Once this cancel has reached a pass (here, or through the request it left), a run found ended
  // CANCELLED was ended by it: `cancelled`. A run found ended before that had ended already: `ended`.
  let asked = false;
  for (;;) {
    // A pass of this process stops at once; its settle writes the end, under the lease.
    const here = context.passesHere.get(executionId);
    if (here) {
      here.cancel(request);
      asked = true;
    }
    const report = await endUnderLease(context, executionId, request, asked);
    if (report) return report;
    // Held elsewhere (a pass, or a decision): leave a request the pass reads, then look again.
    if (!asked) {
      await context.store.requestCancel(
        executionId,
        request,
        context.settings.timeoutMs + 2 * context.settings.leaseMs,
      );
      asked = true;
    }
    if (Date.now() >= until) return { executionId, result: "requested", status: "running" };
    await sleep(RECHECK_MS);
  }
}

/** Ends the run under its lease when the lease is free; undefined when someone holds it. */
function endUnderLease(
  context: RuntimeContext,
  executionId: string,
  request: CancelRequest,
  asked: boolean,
): Promise<CancelReport | undefined> {
  return controlStep<CancelReport | undefined>(
    context,
    executionId,
    { doing: "cancel", waitMs: 0, busy: () => undefined },
    async ({ head, lease, owe }) => {
      if (!head) return { executionId, result: "not_found" };
      if (isTerminal(head.status)) {
        const byThisCancel = asked && head.status === "rejected" && head.errorCode === "CANCELLED";
        return { executionId, result: byThisCancel ? "cancelled" : "ended", status: head.status };
      }
      if (head.status !== "paused" && head.status !== "running")
        throw new CodemodeError("STORAGE_ERROR", `execution ${executionId} has an unknown status`);
      // Paused: its waiting actions close. Running with the lease free: its host is gone, or
      // it was submitted and not started; nobody is running it, so it ends here.
      owe(await endCancelled(context, lease, head, cancelMessage(request)));
      return { executionId, result: "cancelled", status: "rejected" };
    },
  );
}
