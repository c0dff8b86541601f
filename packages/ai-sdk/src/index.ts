export { createCodemodeTool, type CodemodeToolInput, type CodemodeToolOptions } from "./create-codemode-tool.js";
export { codemodeToolApproval, rejectDeniedExecutions, type CodemodeToolApproval, type GenericApprovalOptions, type PerToolApprovalOptions } from "./codemode-tool-approval.js";
export { approvalToolResult, continueAfterApproval } from "./approval-messages.js";
export { syncApprovals, type SyncApprovalsOptions } from "./sync-approvals.js";
export { syncModelApprovals, type SyncModelApprovalsOptions } from "./sync-model-approvals.js";
export { connectorFromAiSdkTools, type AiSdkConnectorOptions } from "./connector-from-ai-sdk-tools.js";
// For approval screens: the reason without the `[codemode execution … seq …]` marker adapters read.
export { approvalReasonText } from "@codemode/core/adapters";
export type { CodemodeToolOutput, ToolOutputOptions } from "./tool-output.js";
