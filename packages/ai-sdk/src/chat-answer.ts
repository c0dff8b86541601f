import { CodemodeError, type CodemodeRuntime, type Outcome } from "@codemode/core";
import { checkChatDecision, decidePendingActions } from "@codemode/core/adapters";
import { type PauseApproval, seqsOf } from "./pause-approvals.js";

/** What became of a chat's answer to a Code Mode approval request. */
export interface ChatAnswer {
  /** True when every action the request showed now carries the answer (applied now, or before). */
  applied: boolean;
  /** The run's outcome after it, or why nothing was decided (an error outcome saying so). */
  outcome: Outcome;
}

/**
 * Applies a chat's answer to a Code Mode approval request to every action the request showed,
 * and to no other (R-AP-8, R-AP-9): Approve approves them all, Deny denies them all with the
 * answer's reason — through `runtime.decide`, so each denied call rejects inside the program with
 * an `ApprovalDenied` error it may catch (uncaught, the run ends rejected). The request and its
 * answer came back through the client, so first the server checks its own signature over the
 * execution, the set of seqs, the tool call and the code, that the execution runs this very code,
 * and that a chat may decide each action (R-AP-11, `checkChatDecision`). A request gone stale —
 * someone decided one of its actions elsewhere, differently — decides nothing: the decision is
 * refused whole (NOT_PAUSED). The same answer applied again is answered from the log.
 */
export async function applyChatAnswer(
  runtime: CodemodeRuntime,
  approval: PauseApproval,
  code: unknown,
  by?: string,
): Promise<ChatAnswer> {
  const { executionId, approved } = approval;
  if (typeof approved !== "boolean")
    return notApplied(executionId, "NOT_PAUSED", `the approval of execution ${executionId} has no response`);
  const doing = approved ? "nothing was approved" : "nothing was denied";
  try {
    const refused = await checkChatDecision(runtime, approval, code, doing);
    if (refused) return { applied: false, outcome: refused };
  } catch (error) {
    // R-RT-3: the store could not say; that is STORAGE_ERROR as data, never NOT_FOUND.
    if (CodemodeError.isInstance(error)) return notApplied(executionId, error.code, error.message);
    throw error;
  }
  const seqs = seqsOf(approval);
  const outcome = await decidePendingActions(runtime, {
    executionId,
    // Each for the pause the request showed: under the lease, a call asked again since is not decided.
    decisions: seqs.map((seq, index) => ({
      seq,
      decision: approved ? "approve" : "deny",
      ...(approval.pauses?.[index] ? { pauseId: approval.pauses[index] } : {}),
    })),
    ...(by ? { by } : {}),
    ...(approval.reason ? { reason: approval.reason } : {}),
  });
  const applied = seqs.every((seq) => outcome.calls?.find((call) => call.seq === seq)?.decision?.approved === approved);
  if (applied || outcome.status !== "error" || outcome.code !== "NOT_PAUSED") return { applied, outcome };
  const shown = seqs.length > 1 ? `actions ${seqs.join(", ")}` : `action ${seqs[0]}`;
  return {
    applied,
    outcome: {
      ...outcome,
      error: `${doing}: the approval request showed ${shown} of execution ${executionId}, and the run moved on since (${outcome.error})`,
    },
  };
}

/**
 * Whether an applied denial ended the run — uncaught in the program (APPROVAL_DENIED), or the
 * run was rejected outright (NOT_PAUSED) — rather than the program going on.
 */
export function endedByDenial(outcome: Outcome): boolean {
  return outcome.status === "error" && (outcome.code === "APPROVAL_DENIED" || outcome.code === "NOT_PAUSED");
}

function notApplied(executionId: string, code: Extract<Outcome, { status: "error" }>["code"], error: string) {
  return { applied: false, outcome: { status: "error", executionId, code, error, calls: [] } satisfies Outcome };
}
