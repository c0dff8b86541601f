// For approval screens: the reason without the `[codemode execution … seq …]` marker adapters read.
export { approvalReasonText } from "@codemode/core/adapters";
export { approvalToolResult, continueAfterApproval } from "./approval-messages.js";
export {
  type CodemodeToolApproval,
  codemodeToolApproval,
  type GenericApprovalOptions,
  type PerToolApprovalOptions,
  rejectDeniedExecutions,
} from "./codemode-tool-approval.js";
export { type AiSdkConnectorOptions, connectorFromAiSdkTools } from "./connector-from-ai-sdk-tools.js";
export { type CodemodeToolInput, type CodemodeToolOptions, createCodemodeTool } from "./create-codemode-tool.js";
export { createModelTools, type ModelToolsOptions } from "./create-model-tools.js";
export { type SyncApprovalsOptions, syncApprovals } from "./sync-approvals.js";
export { type SyncModelApprovalsOptions, syncModelApprovals } from "./sync-model-approvals.js";
export type { CodemodeToolOutput, ToolOutputOptions } from "./tool-output.js";
