export { createCodemodeTool, type CodemodeToolInput, type CodemodeToolOptions } from "./create-codemode-tool.js";
export { codemodeToolApproval, rejectDeniedExecutions } from "./codemode-tool-approval.js";
export { approvalToolResult, continueAfterApproval } from "./approval-messages.js";
export { connectorFromAiSdkTools, type AiSdkConnectorOptions } from "./connector-from-ai-sdk-tools.js";
