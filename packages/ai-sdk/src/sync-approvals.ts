import type { CodemodeRuntime, Outcome } from "@codemode/core";
import {
  BOOLEAN,
  checkArgument,
  checkOptions,
  type DecisionOutcome,
  MODEL_OUTPUT,
  type ModelFacingRejection,
  modelFacingDecision,
  pauseState,
  readPauseReference,
  runtimeWith,
  STRING,
  toModelJson,
} from "@codemode/core/adapters";
import { type DynamicToolUIPart, getToolName, isToolUIPart, type ToolUIPart, type UIMessage } from "ai";
import { applyChatAnswer, endedByDenial } from "./chat-answer.js";
import { UI_MESSAGES } from "./check-options.js";
import { callCode, openPause, pendingChanged } from "./pause-approvals.js";
import { codemodeToolOutput, type ToolOutputOptions } from "./tool-output.js";

export interface SyncApprovalsOptions extends ToolOutputOptions {
  /** Recorded as `by` on the approvals and denials of the chat that `syncApprovals` applies (R-AP-7). Default none. */
  by?: string;
  /**
   * Leave Code Mode parts that still wait for approval as they are. Default false: a waiting part
   * followed by a newer user message becomes its paused result, because `convertToModelMessages`
   * drops unanswered approval requests there and the model would not know its program ran and
   * waits. Set it when the messages go back to a browser, whose Approve button needs the part as
   * it was.
   */
  keepWaiting?: boolean;
}

const SYNCING_RUNTIME = runtimeWith("decide", "execution", "outcome");

type ToolPart = ToolUIPart | DynamicToolUIPart;
type Position = { beforeLastUserMessage: boolean; trailing: boolean };

/**
 * Brings a useChat conversation (UI messages) up to date with the runtime before
 * `convertToModelMessages`, so the model sees every program it wrote with its real result:
 *
 * - a Code Mode part still waiting for approval (`approval-requested`) whose actions were decided
 *   elsewhere (`runtime.decide` from an inbox, the CLI, another process; per action: approved,
 *   edited, denied) becomes `output-available` with the run's model-facing outcome (what the
 *   program made of every decision), or `output-denied` with the human's reason when the run
 *   ended on a denial; one that still waits (or that this runtime cannot find: NOT_FOUND, which
 *   says why) becomes that result when the user wrote after it (see `keepWaiting`);
 * - a part the user answered (`approval-responded`) is applied to every action its request
 *   showed (R-AP-9): denied → each is denied with the reason and rejects in the program as
 *   `ApprovalDenied` (caught, the run goes on and the part shows its outcome; uncaught, it ends
 *   rejected and the AI SDK tells the model of the denial); approved in an earlier turn — they
 *   clicked Approve and typed on, and nothing sent the answer — the run resumes (with the same
 *   checks as the tool's execute). In the last assistant message approved parts are left to
 *   `streamText`, which runs them and streams their results;
 * - an answer the browser made up or altered is refused and nothing runs (R-AP-11): only approval
 *   requests this server signed for that tool call, code and set of actions are decided, only
 *   where the runtime lets a chat decide (`chatApprovals`, the tool's `approvers`), and only while
 *   none of those actions was decided otherwise elsewhere; the part then shows the refusal;
 * - a Code Mode result that reported the run paused (or BUSY) shows the run's outcome now (also
 *   when it waits on other actions than those listed).
 *
 * Code Mode parts are recognised by their approval reason's marker or their outcome, whatever the
 * tool's name; each is checked to run the tool call's own code before anything is read or decided.
 * The messages given are not changed. A store failure rejects with `CodemodeError` STORAGE_ERROR.
 *
 * @example
 * // app/api/chat: the browser sends its messages; some approvals happened on the operator's page.
 * const messages = await syncApprovals(body.messages, runtime);
 * const result = streamText({ model, tools, toolApproval, messages: await convertToModelMessages(messages, { tools }) });
 * return result.toUIMessageStreamResponse({ originalMessages: messages });
 */
export async function syncApprovals<MESSAGE extends UIMessage>(
  messages: MESSAGE[],
  runtime: CodemodeRuntime,
  options: SyncApprovalsOptions = {},
): Promise<MESSAGE[]> {
  const usage = "syncApprovals(messages, runtime, options)";
  checkArgument(usage, "messages", messages, UI_MESSAGES);
  checkArgument(usage, "runtime", runtime, SYNCING_RUNTIME);
  checkOptions(usage, options, { by: STRING, keepWaiting: BOOLEAN, includeCalls: BOOLEAN, modelOutput: MODEL_OUTPUT });
  const lastUserMessage = messages.findLastIndex((message) => message.role === "user");
  const trailingAssistant = messages.at(-1)?.role === "assistant" ? messages.length - 1 : -1;
  const synced: MESSAGE[] = [];
  for (const [index, message] of messages.entries()) {
    if (message.role !== "assistant") {
      synced.push(message);
      continue;
    }
    const position = { beforeLastUserMessage: index < lastUserMessage, trailing: index === trailingAssistant };
    let changed = false;
    const parts: MESSAGE["parts"] = [];
    for (const part of message.parts) {
      const next = isToolUIPart(part) ? await syncPart(runtime, part, position, options) : part;
      changed ||= next !== part;
      parts.push(next as MESSAGE["parts"][number]);
    }
    synced.push(changed ? { ...message, parts } : message);
  }
  return synced;
}

async function syncPart(
  runtime: CodemodeRuntime,
  part: ToolPart,
  position: Position,
  options: SyncApprovalsOptions,
): Promise<ToolPart> {
  const code = callCode(getToolName(part), part.input, runtime);
  switch (part.state) {
    case "approval-requested": {
      const reference = readPauseReference(part.approval.requestReason);
      if (!reference) return part;
      const now = await pauseState(runtime, reference, { code });
      if (now.state === "decided") return settled(part, now.outcome, options);
      // Followed by a newer user message, the call needs a result or the model never sees it:
      // the pause that still waits, or why this runtime cannot show it (NOT_FOUND, saying what to do).
      return position.beforeLastUserMessage && !options.keepWaiting ? settled(part, now.outcome, options) : part;
    }
    case "approval-responded": {
      const reference = readPauseReference(part.approval.requestReason);
      if (!reference) return part;
      const { approved } = part.approval;
      // In the last message the AI SDK runs an approved call itself, and streams its result.
      if (approved && position.trailing) return part;
      const approval = {
        ...reference,
        approvalId: part.approval.id,
        toolCallId: part.toolCallId,
        approved,
        ...(part.approval.reason ? { reason: part.approval.reason } : {}),
      };
      const answer = await applyChatAnswer(runtime, approval, code, options.by);
      const output = {
        ...withoutResult(part),
        state: "output-available",
        output: codemodeToolOutput(answer.outcome, options),
      };
      if (approved) return { ...output, approval: { ...part.approval, approved: true } } as ToolPart;
      // A denial the program did not catch ended the run: the AI SDK tells the model of it itself.
      return answer.applied && endedByDenial(answer.outcome) ? part : (output as ToolPart);
    }
    case "output-available": {
      const reference = openPause(part.output);
      if (!reference) return part;
      const now = await pauseState(runtime, reference, { code });
      if (now.state === "missing" || (now.state === "waiting" && !pendingChanged(reference, now.outcome))) return part;
      const next = settled(part, now.outcome, options);
      return JSON.stringify(next) === JSON.stringify(part) ? part : next;
    }
    default:
      return part;
  }
}

/** The part as a settled call: its outcome, or for a rejected approval request the denial. */
function settled(part: ToolPart, outcome: DecisionOutcome, options: ToolOutputOptions): ToolPart {
  const base = withoutResult(part);
  if (outcome.status === "rejected") {
    const shown = modelFacingDecision(outcome) as ModelFacingRejection;
    if (part.state === "approval-requested") {
      const reason = `${shown.message}${outcome.reason ? ` Reason: ${outcome.reason}` : ""}`;
      return {
        ...base,
        state: "output-denied",
        approval: {
          id: part.approval.id,
          approved: false,
          ...(part.approval.requestReason ? { requestReason: part.approval.requestReason } : {}),
          reason,
        },
      } as ToolPart;
    }
    return { ...base, state: "output-available", output: toModelJson(shown) } as ToolPart;
  }
  // An approval-requested part loses its request: the call now simply has its result.
  return { ...base, state: "output-available", output: codemodeToolOutput(outcome as Outcome, options) } as ToolPart;
}

function withoutResult(part: ToolPart): Omit<ToolPart, "state" | "output" | "errorText" | "approval"> {
  const {
    state: _state,
    output: _output,
    errorText: _errorText,
    approval: _approval,
    ...rest
  } = part as ToolPart & { output?: unknown; errorText?: unknown; approval?: unknown };
  return rest;
}
