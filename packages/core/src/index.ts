// @codemode/core: what applications use. Adapter glue is in `@codemode/core/adapters`, the
// executor and its protocol in `@codemode/core/sandbox`, store-author types in `@codemode/core/store`,
// the inputs and reports of the operator methods (listing, fork, rerun, replay checks…) in
// `@codemode/core/operations`.

export {
  type Connector,
  type ConnectorDefinition,
  defineConnector,
  type JsonSchema,
  type StandardSchemaV1,
  type ToolContext,
  type ToolDefinition,
} from "./connectors/define-connector.js";
export { MAX_DURABLE_CHARS } from "./log/durable-value.js";
export {
  type ApprovalDecision,
  CodemodeError,
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
} from "./outcome.js";
export type { ApprovalPolicy } from "./runtime/approvals/index.js";
export type { CodemodeRuntimeOptions } from "./runtime/context/index.js";
export { type CodemodeRuntime, createCodemodeRuntime } from "./runtime/handle/index.js";
export type { DecideInput, Decision } from "./runtime/operations/index.js";
export { truncateResult } from "./runtime/records/index.js";
export type { Snippet } from "./snippets/snippets.js";
