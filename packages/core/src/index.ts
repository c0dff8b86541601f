// @codemode/core: what applications use. Adapter glue is in `@codemode/core/adapters`, the
// executor and its protocol in `@codemode/core/sandbox`, store-author types in `@codemode/core/store`.

export {
  type Connector,
  type ConnectorDefinition,
  defineConnector,
  type JsonSchema,
  type StandardSchemaV1,
  type ToolContext,
  type ToolDefinition,
} from "./connectors/define-connector.js";
export type { SearchResult } from "./connectors/search.js";
export { MAX_DURABLE_CHARS } from "./log/durable-value.js";
export {
  type ApprovalDecision,
  type ArgumentDifference,
  CodemodeError,
  type Divergence,
  type DivergentCall,
  ERROR_CODES,
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
export type { ApprovalPolicy } from "./runtime/approvals/index.js";
export type { DescribeOutput, SearchOutput } from "./runtime/catalogue/index.js";
export type { CodemodeRuntimeOptions, PassLoad } from "./runtime/context/index.js";
export { type CodemodeRuntime, createCodemodeRuntime } from "./runtime/handle/index.js";
export type {
  ApproveInput,
  CancelInput,
  CancelReport,
  DecideInput,
  Decision,
  ForkInput,
  ListQuery,
  Page,
  PendingQuery,
  RecoverOptions,
  ReplayCheckQuery,
  ReplayCheckReport,
  ReplayCheckResult,
  RerunQuery,
  RerunReport,
  RerunResult,
  SaveSnippetInput,
} from "./runtime/operations/index.js";
export type { ExecutionSummary } from "./runtime/records/index.js";
export { truncateResult } from "./runtime/records/index.js";
export type { Snippet } from "./snippets/snippets.js";
