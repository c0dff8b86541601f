import type { Outcome } from "@codemode/core";
import {
  approvalFollowUpText,
  checkArgument,
  executionIdOfModelOutput,
  MODEL_OUTPUT,
  type ModelOutputOptions,
  OUTCOME,
  STRING,
  shapeOf,
} from "@codemode/core/adapters";
import type { ModelMessage, ToolModelMessage } from "ai";
import { MODEL_MESSAGES } from "./check-options.js";
import { findPauseApproval } from "./pause-approvals.js";
import { modelJson } from "./tool-output.js";

const TOOL_CALL = shapeOf(
  { toolCallId: STRING, toolName: STRING },
  "the tool call { toolCallId, toolName } of strings",
  ["toolCallId", "toolName"],
);

/**
 * The tool message that answers a `codemode` tool call with an outcome (R-LC-2), shaped as the
 * tool itself would answer it (no `calls`, bounded logs). For a call that has no result yet —
 * typically one whose AI SDK approval request was settled out of band with `runtime.approve`.
 *
 * @deprecated `syncModelApprovals(messages, runtime)` gives every such call its result from the
 * store, whoever decided it; this stays for code written before it.
 *
 * @example
 * const outcome = await runtime.approve({ executionId, seq });
 * messages.push(approvalToolResult(outcome, { toolCallId: request.toolCallId, toolName: "codemode" }));
 */
export function approvalToolResult(
  outcome: Outcome,
  call: { toolCallId: string; toolName: string },
  options: ModelOutputOptions = {},
): ToolModelMessage {
  const usage = "approvalToolResult(outcome, call, options)";
  checkArgument(usage, "outcome", outcome, OUTCOME);
  checkArgument(usage, "call", call, TOOL_CALL);
  checkArgument(usage, "options", options, MODEL_OUTPUT);
  return {
    role: "tool",
    content: [
      {
        type: "tool-result",
        toolCallId: call.toolCallId,
        toolName: call.toolName,
        output: modelJson(outcome, options),
      },
    ],
  };
}

/**
 * The conversation to continue with after `runtime.approve` (R-LC-2), so the model sees the real
 * result of the code it wrote:
 *
 * - the `codemode` result that reported this execution paused is replaced by the new outcome, so
 *   the call keeps exactly one result (providers refuse a second one); if the model spoke after
 *   it, a short user message says the run went on, so the model has a turn to answer;
 * - else a `codemode` call whose AI SDK approval request names this execution gets its result;
 * - else the outcome is appended as a user message.
 *
 * For a conversation that may hold several such calls, or that went on after them, use
 * `syncModelApprovals` (model messages) or `syncApprovals` (UI messages).
 *
 * The messages given are not changed.
 *
 * @deprecated `syncModelApprovals(messages, runtime)` (or `syncApprovals` for UI messages) does
 * this for every call of the conversation from the store; this stays for code written before it.
 *
 * @example
 * const outcome = await runtime.approve({ executionId, seq });
 * messages = continueAfterApproval(messages, outcome);
 * const next = await generateText({ model, tools, messages });
 */
export function continueAfterApproval(
  messages: ModelMessage[],
  outcome: Outcome,
  options: ModelOutputOptions = {},
): ModelMessage[] {
  const usage = "continueAfterApproval(messages, outcome, options)";
  checkArgument(usage, "messages", messages, MODEL_MESSAGES);
  checkArgument(usage, "outcome", outcome, OUTCOME);
  checkArgument(usage, "options", options, MODEL_OUTPUT);
  let replacedAt = -1;
  const next = messages.map((message, index): ModelMessage => {
    if (message.role !== "tool") return message;
    const content = message.content.map((part) => {
      if (
        part.type !== "tool-result" ||
        part.output.type !== "json" ||
        executionIdOfModelOutput(part.output.value) !== outcome.executionId
      )
        return part;
      replacedAt = index;
      return { ...part, output: modelJson(outcome, options) };
    });
    return replacedAt === index ? { ...message, content } : message;
  });
  if (replacedAt === next.length - 1) return next;
  if (replacedAt >= 0) return [...next, { role: "user", content: approvalFollowUpText(outcome) }];

  for (const message of messages) {
    if (message.role !== "assistant" || typeof message.content === "string") continue;
    for (const part of message.content) {
      if (
        part.type !== "tool-call" ||
        findPauseApproval(messages, part.toolCallId)?.executionId !== outcome.executionId
      )
        continue;
      const answered = messages.some(
        (other) =>
          other.role === "tool" &&
          other.content.some((item) => item.type === "tool-result" && item.toolCallId === part.toolCallId),
      );
      if (!answered) return [...messages, approvalToolResult(outcome, part, options)];
    }
  }
  return [
    ...messages,
    {
      role: "user",
      content: `Code Mode execution ${outcome.executionId} went on after approval: ${JSON.stringify(modelJson(outcome, options).value)}`,
    },
  ];
}
