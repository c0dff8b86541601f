// @codemode/core: what applications use. Adapter glue is in `@codemode/core/adapters`, the
// executor and its protocol in `@codemode/core/sandbox`, store-author types in `@codemode/core/store`.
export { createCodemodeRuntime, type CodemodeRuntime, type CodemodeRuntimeOptions } from "./runtime/create-runtime.js";
export {
  defineConnector,
  type Connector,
  type ConnectorDefinition,
  type JsonSchema,
  type StandardSchemaV1,
  type ToolContext,
  type ToolDefinition,
} from "./connectors/define-connector.js";
export {
  CodemodeError,
  ERROR_CODES,
  type ApprovalDecision,
  type ErrorCode,
  type ErrorOutcome,
  type ExecutionEndStatus,
  type ExecutionState,
  type ExecutionStatus,
  type LogEntry,
  type LogEntryState,
  type Outcome,
  type PendingAction,
  type RollbackReport,
} from "./outcome.js";
export type { ExecutionSummary } from "./runtime/log-view.js";
export type { ListQuery, Page, PendingQuery } from "./runtime/operations/list.js";
export type { ApproveInput } from "./runtime/operations/approve.js";
export type { RecoverOptions } from "./runtime/operations/recover.js";
export type { PassLoad } from "./runtime/pass-gate.js";
export type { SaveSnippetInput } from "./runtime/operations/snippets.js";
export { MAX_DURABLE_CHARS } from "./log/durable-value.js";
export { truncateResult } from "./runtime/truncate-result.js";
export type { DescribeOutput, SearchOutput } from "./runtime/discovery.js";
export type { Snippet } from "./snippets/snippets.js";
export type { SearchResult } from "./connectors/search.js";
