// @codemode/core/operations: the inputs and reports of the runtime's operator methods (listing,
// cancel, fork, recover, rerun, replay checks, rollback, snippets, search, load), for the tools
// that drive them: the CLI, dashboards, job runners. An application that executes programs and
// decides their pauses needs only `@codemode/core`.

export type { SearchResult } from "./connectors/search.js";
export type { ArgumentDifference, Divergence, DivergentCall, RollbackReport } from "./outcome.js";
export type { DescribeOutput, SearchOutput } from "./runtime/catalogue/index.js";
export type { PassLoad } from "./runtime/context/index.js";
export type {
  ApproveInput,
  CancelInput,
  CancelReport,
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
