import { type InputRequest, type InputRequiredResult, inputRequired } from "@modelcontextprotocol/server";
import { checkChatDecision, signPauseApproval } from "../adapters/chat-decision.js";
import type { DecisionOutcome } from "../adapters/decide-pending-action.js";
import { errorOutcome } from "../outcome.js";
import type { CodemodeRuntime } from "../runtime/handle/index.js";
import { applyAnswer, pausedQuestion, TaskRequestError } from "./serve-tasks-extension.js";
import { outcomeResult, type ServerToolSettings } from "./server-tools.js";

/** Marks a signed claim as an in-call question of `execute` (the signature covers the execution, its actions, their pauses and the code). */
const TOOL_CALL = "mcp:execute:input_required";
/** The longest request state read back: a signature and a pause of up to `MAX_FORM_ACTIONS` actions fit well within. */
const MAX_STATE_CHARS = 16_000;

type CallToolResult = ReturnType<typeof outcomeResult>;

/** What a retried call's answers decided: the outcome now, and why it still waits when nobody decided. */
export interface AnsweredInsideCall {
  outcome: DecisionOutcome;
  stillPending?: string;
}

/**
 * A paused run put to a 2026-07-28 client that may decide but did not ask for a task, inside its
 * `tools/call` (the revision's multi-round-trip `input_required` answer): the approval form, as
 * for a task, and a request state the server signed (R-AP-11: the execution, exactly the offered
 * actions and their pauses, and the code) that the client's retry brings back with its answers.
 * Any other outcome, or a pause the client may decide nothing of, is `execute`'s answer.
 */
export async function askInsideCall(
  runtime: CodemodeRuntime,
  settings: ServerToolSettings,
  answered: AnsweredInsideCall,
): Promise<CallToolResult | InputRequiredResult> {
  const { outcome } = answered;
  if (outcome.status !== "paused") return outcomeResult(outcome, settings);
  const execution = await runtime.execution(outcome.executionId);
  const { question } = await pausedQuestion(runtime, execution);
  if (!execution || !question)
    return outcomeResult(
      outcome,
      settings,
      answered.stillPending ??
        (execution?.status === "paused" ? "these actions are reserved to an operator's approval." : undefined),
    );
  if (answered.stillPending) return outcomeResult(outcome, settings, answered.stillPending);
  const offered = [...question.form.offered.values()];
  const claim = {
    executionId: execution.id,
    seq: offered[0]?.seq ?? 0,
    seqs: offered.map((action) => action.seq),
    pauses: offered.map((action) => action.pauseId ?? ""),
    toolCallId: TOOL_CALL,
  };
  const signature = signPauseApproval(runtime, claim, execution.code);
  if (!signature) return outcomeResult(outcome, settings);
  const { form } = question;
  const request = {
    method: "elicitation/create",
    params: { mode: "form", message: form.message, requestedSchema: form.requestedSchema },
  } as unknown as InputRequest;
  return inputRequired({
    inputRequests: { [question.key]: request },
    requestState: Buffer.from(JSON.stringify({ ...claim, signature })).toString("base64url"),
  });
}

/**
 * A retried `execute` that brings answers back: the request state is checked as a chat's answer
 * is (signed by this runtime for exactly these actions and pauses, the execution runs exactly
 * `code`, the client may decide each action), then the answer is applied and the resumed run
 * awaited. Whatever is refused decides nothing and says why.
 */
export async function answerInsideCall(
  runtime: CodemodeRuntime,
  state: string,
  code: string,
  responses: Record<string, unknown>,
  by: string,
): Promise<AnsweredInsideCall> {
  const claim = readState(state);
  if (!claim)
    return {
      outcome: errorOutcome("", "NOT_FOUND", "The request state is not one this server made: nothing was decided."),
    };
  const refused = await checkChatDecision(runtime, claim, code, "nothing was decided");
  if (refused) return { outcome: refused };
  const execution = await runtime.execution(claim.executionId);
  const current =
    (await runtime.outcome(claim.executionId)) ?? errorOutcome(claim.executionId, "NOT_FOUND", "the execution is gone");
  const { question } = await pausedQuestion(runtime, execution);
  // The state answers exactly the actions and pauses it was signed for: the run's current
  // question must be that one, or a state kept from an earlier pause would decide a later one.
  const offered = question ? [...question.form.offered.values()] : [];
  const same =
    offered.map((action) => action.seq).join(",") === claim.seqs.join(",") &&
    offered.map((action) => action.pauseId ?? "").join(",") === claim.pauses.join(",");
  const response = question && same ? responses[question.key] : undefined;
  if (!question || response === undefined)
    return { outcome: current, stillPending: "the answer was for a pause that no longer waits; nothing was decided." };
  try {
    const deciding = applyAnswer(runtime, claim.executionId, question.form, response, by);
    if (deciding === "cancel")
      return { outcome: current, stillPending: "the person closed the approval request without deciding." };
    return { outcome: await deciding };
  } catch (error) {
    if (!(error instanceof TaskRequestError)) throw error;
    return { outcome: current, stillPending: `${error.message.replace(/\.$/, "")}.` };
  }
}

/** The signed claim a request state carries, read as hostile input; undefined when it is not one. */
function readState(state: string) {
  if (state.length > MAX_STATE_CHARS) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(state, "base64url").toString("utf8"));
  } catch {
    return undefined;
  }
  const claim = value as Record<string, unknown> | null;
  const numbers = (list: unknown) => Array.isArray(list) && list.every((seq) => Number.isInteger(seq));
  const strings = (list: unknown) => Array.isArray(list) && list.every((pause) => typeof pause === "string");
  if (
    typeof claim !== "object" ||
    claim === null ||
    typeof claim.executionId !== "string" ||
    !Number.isInteger(claim.seq) ||
    !numbers(claim.seqs) ||
    !strings(claim.pauses) ||
    claim.toolCallId !== TOOL_CALL ||
    typeof claim.signature !== "string"
  )
    return undefined;
  return {
    executionId: claim.executionId,
    seq: claim.seq as number,
    seqs: claim.seqs as number[],
    pauses: claim.pauses as string[],
    toolCallId: TOOL_CALL,
    signature: claim.signature,
  };
}
