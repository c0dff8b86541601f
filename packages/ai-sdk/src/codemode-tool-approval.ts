import { CodemodeError, type CodemodeRuntime, type Outcome } from "@codemode/core";
import { createOutcomeMemo, decidePendingAction, pauseApprovalReason, readPauseReference, type OutcomeMemo, type PauseReference } from "@codemode/core/adapters";
import type { ModelMessage, ToolApprovalStatus } from "ai";

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
 * The AI SDK approval function that turns a Code Mode pause into the AI SDK's own approval
 * request, so `tool-approval-request` / `tool-approval-response` UIs (useChat's
 * `addToolApprovalResponse`, a CLI prompt) approve connector calls unchanged.
 *
 * Asked about a new `codemode` call, it runs the code right away. If the run pauses, it answers
 * `user-approval` with a reason that names the pending action (and, in a trailing marker, the
 * execution and seq); otherwise `not-applicable`, and the tool's execute hands back the same
 * outcome without running the code again. When the approved call comes back, the tool's execute
 * resumes the execution with `runtime.approve`. Add `rejectDeniedExecutions` before the next
 * generation so a denial ends the run at once (else `expirePaused` ends it later).
 *
 * @example
 * const result = await generateText({
 *   model,
 *   tools: { codemode: createCodemodeTool(runtime) },
 *   toolApproval: { codemode: codemodeToolApproval(runtime) },
 *   messages,
 * });
 */
export function codemodeToolApproval(runtime: CodemodeRuntime) {
  return async (input: { code: string }, options: { toolCallId: string; messages: ModelMessage[] }): Promise<ToolApprovalStatus> => {
    // The SDK asks again when the approval comes back; the code already ran and waits there.
    if (findPauseApproval(options.messages, options.toolCallId)) return "user-approval";
    const outcome = await prerun(runtime, options.toolCallId, input.code).run();
    return outcome.status === "paused" ? { type: "user-approval", reason: pauseApprovalReason(outcome) } : "not-applicable";
  };
}

/**
 * Ends, as `rejected`, the paused executions whose AI SDK approval request was just denied (the
 * `tool-approval-response` parts of the last message). The AI SDK tells the model of a denial
 * itself but calls no tool code, so the runtime hears of it only here. Returns the execution ids
 * it rejected.
 *
 * @example
 * messages.push({ role: "tool", content: [{ type: "tool-approval-response", approvalId, approved: false }] });
 * await rejectDeniedExecutions(runtime, messages, { by: user.email });
 */
export async function rejectDeniedExecutions(runtime: CodemodeRuntime, messages: ModelMessage[], options: { by?: string } = {}): Promise<string[]> {
  const last = messages.at(-1);
  if (last?.role !== "tool") return [];
  const rejected: string[] = [];
  for (const part of last.content) {
    if (part.type !== "tool-approval-response" || part.approved) continue;
    const request = approvalRequests(messages).find((candidate) => candidate.approvalId === part.approvalId);
    if (!request || !(await runsCode(runtime, request, toolCallCode(messages, request.toolCallId)))) continue;
    const decision = { executionId: request.executionId, seq: request.seq, approved: false, ...(options.by ? { by: options.by } : {}), ...(part.reason ? { reason: part.reason } : {}) };
    if ((await decidePendingAction(runtime, decision)).status === "rejected") rejected.push(request.executionId);
  }
  return rejected;
}

/** A Code Mode pause carried by an AI SDK approval request, with the answer when there is one. */
export interface PauseApproval extends PauseReference {
  approvalId: string;
  toolCallId: string;
  approved?: boolean;
  reason?: string;
}

/** The Code Mode approval request for `toolCallId` in a conversation, with its response. */
export function findPauseApproval(messages: ModelMessage[], toolCallId: string): PauseApproval | undefined {
  const request = approvalRequests(messages).find((candidate) => candidate.toolCallId === toolCallId);
  if (!request) return undefined;
  for (const message of messages) {
    if (message.role !== "tool") continue;
    for (const part of message.content) {
      if (part.type === "tool-approval-response" && part.approvalId === request.approvalId) {
        return { ...request, approved: part.approved, ...(part.reason ? { reason: part.reason } : {}) };
      }
    }
  }
  return request;
}

/**
 * Resumes the execution an approved AI SDK approval stands for. The reason came back through the
 * client, so the execution must exist and run this very code (which the AI SDK can sign with
 * `experimental_toolApprovalSecret`) before anything is approved.
 */
export async function resumeApproved(runtime: CodemodeRuntime, approval: PauseApproval, code: string, by?: string): Promise<Outcome> {
  const { executionId, seq } = approval;
  if (approval.approved !== true) return failed(executionId, "NOT_PAUSED", `the approval of execution ${executionId} has no approving response`);
  let matches: boolean;
  try {
    matches = await runsCode(runtime, approval, code);
  } catch (error) {
    // R-RT-3: the store could not say; that is STORAGE_ERROR as data, never NOT_FOUND.
    if (CodemodeError.isInstance(error)) return { status: "error", executionId, code: error.code, error: error.message, calls: [] };
    throw error;
  }
  if (!matches) return failed(executionId, "NOT_FOUND", `the approval names execution ${executionId}, which does not run this tool call's code`);
  const audit = { ...(by ? { by } : {}), ...(approval.reason ? { reason: approval.reason } : {}) };
  const outcome = await decidePendingAction(runtime, { executionId, seq, approved: true, ...audit });
  return outcome.status === "rejected" ? failed(executionId, "NOT_PAUSED", `execution ${executionId} was rejected at ${outcome.rejected.connector}.${outcome.rejected.method}`) : outcome;
}

function approvalRequests(messages: ModelMessage[]): Array<PauseApproval> {
  const requests: PauseApproval[] = [];
  for (const message of messages) {
    if (message.role !== "assistant" || typeof message.content === "string") continue;
    for (const part of message.content) {
      if (part.type !== "tool-approval-request") continue;
      const reference = readPauseReference(part.reason);
      if (reference) requests.push({ ...reference, approvalId: part.approvalId, toolCallId: part.toolCallId });
    }
  }
  return requests;
}

function toolCallCode(messages: ModelMessage[], toolCallId: string): unknown {
  for (const message of messages) {
    if (message.role !== "assistant" || typeof message.content === "string") continue;
    const call = message.content.find((part) => part.type === "tool-call" && part.toolCallId === toolCallId);
    if (call?.type === "tool-call") return (call.input as { code?: unknown } | undefined)?.code;
  }
  return undefined;
}

async function runsCode(runtime: CodemodeRuntime, reference: PauseReference, code: unknown): Promise<boolean> {
  const execution = await runtime.execution(reference.executionId);
  return execution !== null && typeof code === "string" && execution.code === code;
}

function failed(executionId: string, code: "NOT_PAUSED" | "NOT_FOUND", error: string): Outcome {
  return { status: "error", executionId, code, error, calls: [] };
}
