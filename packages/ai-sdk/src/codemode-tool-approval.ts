import type { CodemodeRuntime, Outcome } from "@codemode/core";
import {
  chatMayDecide,
  checkArgument,
  checkOptions,
  directCallCode,
  pauseApprovalReason,
  runtimeWith,
  STRING,
  signPauseApproval,
} from "@codemode/core/adapters";
import type { ModelMessage, ToolApprovalStatus } from "ai";
import { applyChatAnswer } from "./chat-answer.js";
import { checkApprovalRuntime, MODEL_MESSAGES } from "./check-options.js";
import { directToolOf, isCodemodeTool } from "./codemode-tools.js";
import { findPauseApproval, pauseApprovals, toolCallCode } from "./pause-approvals.js";
import { prerun } from "./prerun.js";

/** What the AI SDK passes a per-tool approval function (`toolApproval: { codemode: … }`). */
export interface PerToolApprovalOptions {
  toolCallId: string;
  messages: ModelMessage[];
}

/** What the AI SDK passes a generic approval function (`toolApproval: …` for every tool). */
export interface GenericApprovalOptions {
  toolCall: { toolName: string; toolCallId: string; input: unknown };
  tools?: Readonly<Record<string, unknown>> | undefined;
  messages: ModelMessage[];
}

/**
 * The approval function `codemodeToolApproval` returns. It works in both places the AI SDK takes
 * one: as the codemode tool's entry (`toolApproval: { codemode: fn }`) and as the generic function
 * for every tool (`toolApproval: fn`), where calls of other tools are `not-applicable`.
 */
export interface CodemodeToolApproval {
  (input: { code: string }, options: PerToolApprovalOptions): Promise<ToolApprovalStatus>;
  (options: GenericApprovalOptions): Promise<ToolApprovalStatus>;
}

/**
 * The AI SDK approval function that turns a Code Mode pause into the AI SDK's own approval
 * request, so `tool-approval-request` / `tool-approval-response` UIs (useChat's
 * `addToolApprovalResponse`, a CLI prompt) approve connector calls unchanged.
 *
 * Asked about a new `codemode` call, it runs the code right away. If the run pauses with actions
 * the chat may decide (the runtime's `chatApprovals`, the tool's `approvers`), it answers
 * `user-approval` with a reason that lists them — one request for every action the program
 * waits on at once (R-AP-8), up to 20 — and, in a trailing marker, the execution, their seqs and
 * the server's signature over them, the tool call and its code (show people
 * `approvalReasonText(reason)`). Otherwise `not-applicable`, and the tool's execute hands back the
 * same outcome without running the code again (a pause an operator decides then shows as the
 * paused result; `syncApprovals` brings the decision in later). Only a signed request's answer is
 * ever applied, and only to the actions it showed (R-AP-11). When the approved call comes back,
 * the tool's execute approves every action shown (`runtime.decide`) and resumes the run. Add
 * `rejectDeniedExecutions` (or `syncApprovals` for UI messages) before the next generation so a
 * denial reaches the program at once (else `expirePaused` ends the run later). As the generic
 * function it asks about the tools of `createModelTools` the same way: a direct call is a one-call
 * run, run here and paused before the tool does anything.
 *
 * @example
 * const result = await generateText({
 *   model,
 *   tools: { codemode: createCodemodeTool(runtime) },
 *   toolApproval: { codemode: codemodeToolApproval(runtime) }, // or toolApproval: codemodeToolApproval(runtime)
 *   messages,
 * });
 */
export function codemodeToolApproval(runtime: CodemodeRuntime): CodemodeToolApproval {
  checkApprovalRuntime(runtime);
  const decide = async (
    code: string,
    toolCallId: string,
    messages: ModelMessage[],
    start?: () => Promise<Outcome>,
  ): Promise<ToolApprovalStatus> => {
    // The SDK asks again when the approval comes back; the code already ran and waits there.
    if (findPauseApproval(messages, toolCallId)) return "user-approval";
    const outcome = await prerun(runtime, toolCallId, code, start).run();
    if (outcome.status !== "paused") return "not-applicable";
    const { executionId } = outcome;
    // The request shows the actions a chat may decide; an operator's stay pending for the operator.
    const seqs = outcome.pending.filter((action) => chatMayDecide(runtime, action)).map((action) => action.seq);
    if (seqs.length === 0) return "not-applicable";
    const reason = pauseApprovalReason(outcome, {
      seqs,
      signature: (covered) => signPauseApproval(runtime, { executionId, toolCallId, ...covered }, code),
    });
    return { type: "user-approval", reason };
  };
  return (async (first: unknown, second?: unknown): Promise<ToolApprovalStatus> => {
    if (isPerToolCall(first, second))
      return decide(
        first.code,
        (second as PerToolApprovalOptions).toolCallId,
        (second as PerToolApprovalOptions).messages,
      );
    if (isGenericCall(first)) {
      const { toolCall, tools, messages } = first;
      const tool = tools?.[toolCall.toolName];
      // A model tool's call is a one-call run, asked about like a program's (createModelTools).
      const direct = directToolOf(tool);
      if (direct !== undefined) {
        const args = toolCall.input;
        return decide(directCallCode(direct, args), toolCall.toolCallId, messages, () =>
          runtime.callTool({ tool: direct, args }),
        );
      }
      const ours = tool === undefined ? toolCall.toolName === "codemode" : isCodemodeTool(tool);
      const code = (toolCall.input as { code?: unknown } | null)?.code;
      if (!ours || typeof code !== "string") return "not-applicable";
      return decide(code, toolCall.toolCallId, messages);
    }
    throw new TypeError(
      "codemodeToolApproval(runtime) returns an AI SDK approval function: pass it to generateText / streamText / ToolLoopAgent as `toolApproval: { codemode: codemodeToolApproval(runtime) }` or as `toolApproval: codemodeToolApproval(runtime)`; " +
        `it was called with ${describeArguments(first, second)}.`,
    );
  }) as CodemodeToolApproval;
}

const DECIDING_RUNTIME = runtimeWith("decide", "execution", "outcome");

/**
 * Applies the denials of Code Mode approval requests just answered (the `tool-approval-response`
 * parts of the last message): every action a denied request showed is denied with the answer's
 * reason (`runtime.decide`, R-AP-9), so each call rejects inside the program with an
 * `ApprovalDenied` error — the program may catch it and go on; uncaught, the run ends rejected.
 * The AI SDK tells the model of a denial itself but calls no tool code, so the runtime hears of
 * it only here. Only denials of requests this server signed for that tool call, of actions a chat
 * may decide, are applied (`checkChatDecision`); others change nothing. Returns the ids of the
 * executions whose actions are now denied. With UI messages, `syncApprovals` does this too.
 *
 * @deprecated `syncModelApprovals(messages, runtime, { by })` before the next generation does this
 * and the rest of what a conversation needs after an approval; this stays for code written before it.
 *
 * @example
 * messages.push({ role: "tool", content: [{ type: "tool-approval-response", approvalId, approved: false, reason: "too many" }] });
 * await rejectDeniedExecutions(runtime, messages, { by: user.email });
 */
export async function rejectDeniedExecutions(
  runtime: CodemodeRuntime,
  messages: ModelMessage[],
  options: { by?: string } = {},
): Promise<string[]> {
  const usage = "rejectDeniedExecutions(runtime, messages, options)";
  checkArgument(usage, "runtime", runtime, DECIDING_RUNTIME);
  checkArgument(usage, "messages", messages, MODEL_MESSAGES);
  checkOptions(usage, options, { by: STRING });
  const last = messages.at(-1);
  if (last?.role !== "tool") return [];
  const denied: string[] = [];
  for (const part of last.content) {
    if (part.type !== "tool-approval-response" || part.approved) continue;
    const request = pauseApprovals(messages).find((candidate) => candidate.approvalId === part.approvalId);
    if (!request) continue;
    const answer = await applyChatAnswer(
      runtime,
      { ...request, approved: false, ...(part.reason ? { reason: part.reason } : {}) },
      toolCallCode(messages, request.toolCallId, runtime),
      options.by,
    );
    if (answer.applied) denied.push(request.executionId);
  }
  return denied;
}

function isPerToolCall(first: unknown, second: unknown): first is { code: string } {
  const options = second as Partial<PerToolApprovalOptions> | undefined;
  return (
    typeof (first as { code?: unknown } | null)?.code === "string" &&
    typeof options?.toolCallId === "string" &&
    Array.isArray(options.messages)
  );
}

function isGenericCall(first: unknown): first is GenericApprovalOptions {
  const candidate = first as Partial<GenericApprovalOptions> | null;
  return (
    typeof candidate?.toolCall?.toolName === "string" &&
    typeof candidate.toolCall.toolCallId === "string" &&
    Array.isArray(candidate.messages)
  );
}

function describeArguments(...args: unknown[]): string {
  const shown = args
    .filter((arg) => arg !== undefined)
    .map((arg) => (typeof arg === "object" && arg !== null ? `{ ${Object.keys(arg).join(", ")} }` : String(arg)));
  return shown.length > 0 ? `(${shown.join(", ")})` : "no arguments";
}
