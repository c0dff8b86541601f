export {
  type ApprovalRule,
  connectorFromLangChainTools,
  type LangChainCallContext,
  type LangChainConnectorOptions,
} from "./connector-from-langchain-tools.js";
export { type CodemodeTool, type CodemodeToolOptions, createCodemodeTool } from "./create-codemode-tool.js";
export { createModelTools, type ModelTool, type ModelToolsOptions } from "./create-model-tools.js";
export {
  approvalToolMessage,
  codemodeToolContent,
  continueAfterApproval,
  type PausedCodemodeCall,
  pausedCodemodeCalls,
  type ReplacedToolMessage,
} from "./tool-messages.js";
