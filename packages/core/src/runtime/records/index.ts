// What an execution's record says: how it reads as an outcome or a summary, its log as replay entries, the types of a pass's start and end, results cut to size.
// The room's front door: the rest of the runtime, and core's other rooms, import from here.

export {
  decisionOf,
  type ExecutionSummary,
  pendingSeqsOf,
  readDivergence,
  toExecutionState,
  toLogEntries,
  toPendingAction,
  toSummary,
} from "./log-view.js";
export type { PassEnd, PassInput } from "./pass-end.js";
export { replayEntries } from "./replay-entries.js";
export { truncateResult } from "./truncate-result.js";
