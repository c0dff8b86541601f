import { CodemodeError, type CodemodeRuntime, type Outcome } from "@codemode/core";
import { checkChatDecision, createOutcomeMemo, decidePendingAction, type OutcomeMemo } from "@codemode/core/adapters";
import type { PauseApproval } from "./pause-approvals.js";

// One memo per runtime, shared by its Code Mode tools and approval functions.
const prerunOutcomes = new WeakMap<CodemodeRuntime, OutcomeMemo>();

/**
 * The outcomes of code run while the AI SDK asked whether a call needs approval, by tool call id
 * and code: a provider that reuses ids across conversations still never gets another's outcome.
 */
export function prerun(runtime: CodemodeRuntime, toolCallId: string, code: string) {
  let memo = prerunOutcomes.get(runtime);
  if (!memo) {
    memo = createOutcomeMemo();
    prerunOutcomes.set(runtime, memo);
  }
  const key = `${toolCallId}\n${code}`;
  return { run: () => memo.run(key, () => runtime.execute({ code })), take: () => memo.take(key) };
}

/**
 * Resumes the execution an approved AI SDK approval stands for. The request and its answer came
 * back through the client, so before anything is approved the server checks its own signature
 * over the execution, seq, tool call and code, that the execution runs this very code, and that a
 * chat may approve the action (R-AP-11); each refusal says which check failed and what to do
 * (`checkChatDecision`), and nothing runs.
 */
export async function resumeApproved(
  runtime: CodemodeRuntime,
  approval: PauseApproval,
  code: unknown,
  by?: string,
): Promise<Outcome> {
  const { executionId, seq } = approval;
  if (approval.approved !== true)
    return failed(executionId, "NOT_PAUSED", `the approval of execution ${executionId} has no approving response`);
  try {
    const refused = await checkChatDecision(runtime, approval, code, "nothing was approved");
    if (refused) return refused;
  } catch (error) {
    // R-RT-3: the store could not say; that is STORAGE_ERROR as data, never NOT_FOUND.
    if (CodemodeError.isInstance(error))
      return { status: "error", executionId, code: error.code, error: error.message, calls: [] };
    throw error;
  }
  const audit = { ...(by ? { by } : {}), ...(approval.reason ? { reason: approval.reason } : {}) };
  const outcome = await decidePendingAction(runtime, { executionId, seq, approved: true, ...audit });
  return outcome.status === "rejected"
    ? failed(
        executionId,
        "NOT_PAUSED",
        `execution ${executionId} was rejected at ${outcome.rejected.connector}.${outcome.rejected.method}`,
      )
    : outcome;
}

function failed(executionId: string, code: "NOT_PAUSED" | "NOT_FOUND", error: string): Outcome {
  return { status: "error", executionId, code, error, calls: [] };
}
