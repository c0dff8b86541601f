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
export type { ApprovalPolicy } from "./runtime/approval-policy.js";
export { type CodemodeRuntime, type CodemodeRuntimeOptions, createCodemodeRuntime } from "./runtime/create-runtime.js";
export type { DescribeOutput, SearchOutput } from "./runtime/discovery.js";
export type { ExecutionSummary } from "./runtime/log-view.js";
export type { ApproveInput } from "./runtime/operations/approve.js";
export type { CancelInput, CancelReport } from "./runtime/operations/cancel.js";
export type { DecideInput, Decision } from "./runtime/operations/decide-input.js";
export type { ForkInput } from "./runtime/operations/fork.js";
export type { ListQuery, Page, PendingQuery } from "./runtime/operations/list.js";
export type { RecoverOptions } from "./runtime/operations/recover.js";
export type {
  ReplayCheckQuery,
  ReplayCheckReport,
  ReplayCheckResult,
} from "./runtime/operations/replay-check.js";
export type { RerunQuery, RerunReport, RerunResult } from "./runtime/operations/rerun.js";
export type { SaveSnippetInput } from "./runtime/operations/snippets.js";
export type { PassLoad } from "./runtime/pass-gate.js";
export { truncateResult } from "./runtime/truncate-result.js";
export type { Snippet } from "./snippets/snippets.js";
