// What a test of the AI SDK approval loop needs: the settings that turn Code Mode pauses into AI
// SDK approvals, the approval requests in a result, and the user's answer to one.
import type { CodemodeRuntime } from "@codemode/core";
import { type ModelMessage, stepCountIs, type ToolApprovalRequestOutput, type ToolSet } from "ai";
import { codemodeToolApproval } from "../codemode-tool-approval.js";
import { createCodemodeTool } from "../create-codemode-tool.js";

/**
 * generateText, streamText and ToolLoopAgent settings: the codemode tool, up to five steps, and
 * (unless `withApproval` is false) its pauses as AI SDK approvals.
 */
export function chatSettings(runtime: CodemodeRuntime, withApproval = true) {
  const tools = { codemode: createCodemodeTool(runtime) };
  return {
    tools,
    ...(withApproval ? { toolApproval: { codemode: codemodeToolApproval(runtime) } } : {}),
    stopWhen: stepCountIs(5),
  };
}

/** The tool-approval-request parts of a result's content. */
export function approvalRequests(content: ReadonlyArray<{ type: string }>): Array<ToolApprovalRequestOutput<ToolSet>> {
  return content.filter((part): part is ToolApprovalRequestOutput<ToolSet> => part.type === "tool-approval-request");
}

/** The user's answer to one approval request, as the tool message the next request carries. */
export function answer(request: ToolApprovalRequestOutput<ToolSet>, approved: boolean, reason?: string): ModelMessage {
  return {
    role: "tool",
    content: [
      { type: "tool-approval-response", approvalId: request.approvalId, approved, ...(reason ? { reason } : {}) },
    ],
  };
}
