export { createCodemodeRuntime, type CodemodeRuntime, type CodemodeRuntimeOptions } from "./runtime/create-runtime.js";
export { decideCall, decideStep, type CallDecision, type CallPolicy, type IssuedCall, type RecordedCall } from "./runtime/decide.js";
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
  type ExecutionEndStatus,
  type ExecutionState,
  type ExecutionStatus,
  type LogEntry,
  type LogEntryState,
  type Outcome,
  type PendingAction,
  type RollbackReport,
} from "./outcome.js";
export { MAX_DURABLE_CHARS } from "./log/durable-value.js";
export { truncateResult } from "./runtime/truncate-result.js";
export type { DescribeOutput, SearchOutput } from "./runtime/discovery.js";
export type { Snippet } from "./snippets/snippets.js";
export type { SearchResult } from "./connectors/search.js";
export { connectorDeclaration, jsonSchemaToType, runtimeDeclarations, toolDeclaration } from "./connectors/schema-to-typescript.js";
export { modelDescription, type ModelDescriptionOptions } from "./runtime/model-description.js";
export { approvalResultText, modelFacingOutcome, type ModelFacingOutcome, type ModelOutputOptions } from "./runtime/model-output.js";
export {
  decidePendingAction,
  modelFacingDecision,
  type DecisionOutcome,
  type ModelFacingRejection,
  type PendingDecision,
  type RejectedOutcome,
} from "./adapters/decide-pending-action.js";
export { methodNamesFor } from "./adapters/method-names.js";
export {
  describePendingAction,
  executionIdOfModelOutput,
  pauseApprovalReason,
  readPauseReference,
  toModelJson,
  type PauseReference,
} from "./adapters/pending-approval.js";
export { createOutcomeMemo, type OutcomeMemo } from "./adapters/outcome-memo.js";
export type { KeyvLike } from "./log/execution-store.js";
export { createInProcessLock, type Lease, type LockProvider } from "./log/lock.js";
export * from "./sandbox/index.js";
