export { createCodemodeTool, type CodemodeTool, type CodemodeToolOptions } from "./create-codemode-tool.js";
export { connectorFromLangChainTools, type ApprovalRule, type LangChainCallContext, type LangChainConnectorOptions } from "./connector-from-langchain-tools.js";
export { approvalToolMessage, codemodeToolContent, continueAfterApproval, pausedCodemodeCalls, type PausedCodemodeCall, type ReplacedToolMessage } from "./tool-messages.js";
