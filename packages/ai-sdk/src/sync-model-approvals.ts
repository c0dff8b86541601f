import type { CodemodeRuntime } from "@codemode/core";
import {
  checkArgument,
  checkOptions,
  MODEL_OUTPUT,
  type ModelOutputOptions,
  pauseState,
  runtimeWith,
  STRING,
} from "@codemode/core/adapters";
import type { ModelMessage, ToolResultPart } from "ai";
import { applyChatAnswer, endedByDenial } from "./chat-answer.js";
import { MODEL_MESSAGES } from "./check-options.js";
import { openPause, type PauseApproval, pauseApprovals, pendingChanged, toolCallCode } from "./pause-approvals.js";
import { modelJson } from "./tool-output.js";

export interface SyncModelApprovalsOptions {
  /** Recorded as `by` on the approvals and denials in the messages that it applies (R-AP-7). Default none. */
  by?: string;
  /** How much console output the model sees. Default 50 lines of at most 2 000 characters. */
  modelOutput?: ModelOutputOptions;
}

/**
 * `syncApprovals` for model messages: before `generateText` / `streamText` with a history that went
 * on after a Code Mode approval request (a newer user message), every such `codemode` call gets
 * its result right after it — the run's outcome if its actions were decided elsewhere (per
 * action: approved, edited, denied) or still wait, the resumed run if the history holds an
 * approving response nobody sent, or the denial it holds applied to every action the request
 * showed — so the AI SDK does not throw `Tool result is missing for tool call …` and the model
 * sees its program and what became of it. A `codemode` result that reported the run paused (or
 * BUSY) shows its outcome now. Requests in the last turn are left to the AI SDK's own approval
 * flow, but a denial answered there is applied to the run at once (each denied call rejects in the
 * program), and one whose every action was decided elsewhere and that nothing in the messages
 * answered gets the run's outcome, so that `generateText` right after an operator decided
 * (no new user message) does not throw `AI_MissingToolResultsError`. An answer is applied only to a request this server signed for that tool call, code and
 * set of actions, where the runtime lets a chat decide (R-AP-11); otherwise the call's result is
 * the refusal and nothing runs. The messages given are not changed. A store failure rejects with
 * `CodemodeError` STORAGE_ERROR.
 *
 * @example
 * messages.push({ role: "user", content: "Did my order go through?" });
 * const result = await generateText({ model, tools, toolApproval, messages: await syncModelApprovals(messages, runtime) });
 */
export async function syncModelApprovals(
  messages: ModelMessage[],
  runtime: CodemodeRuntime,
  options: SyncModelApprovalsOptions = {},
): Promise<ModelMessage[]> {
  const usage = "syncModelApprovals(messages, runtime, options)";
  checkArgument(usage, "messages", messages, MODEL_MESSAGES);
  checkArgument(usage, "runtime", runtime, runtimeWith("decide", "execution", "outcome"));
  checkOptions(usage, options, { by: STRING, modelOutput: MODEL_OUTPUT });
  const answered = new Set<string>();
  for (const message of messages)
    if (message.role === "tool")
      for (const part of message.content) if (part.type === "tool-result") answered.add(part.toolCallId);

  const added = new Map<number, ToolResultPart[]>();
  for (const approval of pauseApprovals(messages)) {
    if (answered.has(approval.toolCallId)) continue;
    const at = messages.findIndex(
      (message) =>
        message.role === "assistant" &&
        typeof message.content !== "string" &&
        message.content.some((part) => part.type === "tool-call" && part.toolCallId === approval.toolCallId),
    );
    if (at < 0) continue;
    const code = toolCallCode(messages, approval.toolCallId, runtime);
    // A request of the last turn is the AI SDK's to run (its answer, or the answer still to come),
    // unless every action it showed was decided elsewhere and nothing answered it here: then the
    // call has its result, or the AI SDK would find it missing.
    const lastTurn = !messages.slice(at + 1).some((message) => message.role !== "tool");
    let output: ToolResultPart["output"];
    if (!lastTurn) output = await resultFor(runtime, approval, code, options);
    else {
      // A denial just answered: the AI SDK tells the model itself and calls no tool code, so the
      // runtime hears of it here, before the next generation (R-AP-9); the call's result stays the SDK's.
      if (approval.approved === false) await applyChatAnswer(runtime, approval, code, options.by);
      if (approval.approved !== undefined) continue;
      const now = await pauseState(runtime, approval, { code });
      if (now.state !== "decided") continue;
      output = modelJson(now.outcome, options.modelOutput);
    }
    const result: ToolResultPart = {
      type: "tool-result",
      toolCallId: approval.toolCallId,
      toolName: toolNameOf(messages[at]!, approval.toolCallId),
      output,
    };
    added.set(at, [...(added.get(at) ?? []), result]);
  }

  const synced: ModelMessage[] = [];
  for (const [index, message] of messages.entries()) {
    if (message.role === "tool") {
      const content = await Promise.all(
        message.content.map((part) =>
          part.type === "tool-result" ? refreshed(runtime, part, messages, options) : part,
        ),
      );
      const extra = added.get(index - 1) ?? [];
      added.delete(index - 1);
      synced.push(
        extra.length > 0 || content.some((part, position) => part !== message.content[position])
          ? { ...message, content: [...content, ...extra] }
          : message,
      );
      continue;
    }
    synced.push(message);
    const extra = added.get(index);
    if (extra && messages[index + 1]?.role !== "tool") {
      synced.push({ role: "tool", content: extra });
      added.delete(index);
    }
  }
  return synced;
}

async function resultFor(
  runtime: CodemodeRuntime,
  approval: PauseApproval,
  code: unknown,
  options: SyncModelApprovalsOptions,
): Promise<ToolResultPart["output"]> {
  if (approval.approved === undefined) {
    const now = await pauseState(runtime, approval, { code });
    return modelJson(now.outcome, options.modelOutput);
  }
  const answer = await applyChatAnswer(runtime, approval, code, options.by);
  // A denial the program did not catch ended the run: the model reads it as the AI SDK words one.
  if (approval.approved === false && answer.applied && endedByDenial(answer.outcome))
    return { type: "execution-denied", ...(approval.reason ? { reason: approval.reason } : {}) };
  return modelJson(answer.outcome, options.modelOutput);
}

/** A `codemode` result that reported a pause (or BUSY), with the run's outcome now. */
async function refreshed(
  runtime: CodemodeRuntime,
  part: ToolResultPart,
  messages: ModelMessage[],
  options: SyncModelApprovalsOptions,
): Promise<ToolResultPart> {
  if (part.output.type !== "json") return part;
  const reference = openPause(part.output.value);
  if (!reference) return part;
  const now = await pauseState(runtime, reference, { code: toolCallCode(messages, part.toolCallId, runtime) });
  if (now.state === "missing" || (now.state === "waiting" && !pendingChanged(reference, now.outcome))) return part;
  const output = modelJson(now.outcome, options.modelOutput);
  return JSON.stringify(output) === JSON.stringify(part.output) ? part : { ...part, output };
}

function toolNameOf(message: ModelMessage, toolCallId: string): string {
  if (message.role !== "assistant" || typeof message.content === "string") return "codemode";
  const call = message.content.find((part) => part.type === "tool-call" && part.toolCallId === toolCallId);
  return call?.type === "tool-call" ? call.toolName : "codemode";
}
