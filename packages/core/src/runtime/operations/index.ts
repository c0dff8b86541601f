// One module per runtime method, and their shared skeleton (`controlStep`, `handOver`).
// The room's front door: the rest of the runtime, and core's other rooms, import from here.

export { type ApproveInput, approve } from "./approve.js";
export { callTool, directCallCode, type ModelTool, modelTools, type ToolCallInput } from "./call-tool.js";
export { type CancelInput, type CancelReport, cancel } from "./cancel.js";
export { decide } from "./decide.js";
export { type DecideInput, type Decision, MAX_DECISIONS, MAX_GRANT_CALLS } from "./decide-input.js";
export { deleteExecution } from "./delete.js";
export { execute, type NewRunInput, submit } from "./execute.js";
export { expireStale } from "./expire.js";
export { type ForkInput, fork } from "./fork.js";
export { type ListQuery, listExecutions, listPending, type Page, type PendingQuery, readExecution } from "./list.js";
export { readOutcome } from "./outcome.js";
export { pruneExecutions } from "./prune.js";
export { type RecoverOptions, recover } from "./recover.js";
export { reject } from "./reject.js";
export { type ReplayCheckQuery, type ReplayCheckReport, type ReplayCheckResult, replayCheck } from "./replay-check.js";
export { type RerunQuery, type RerunReport, type RerunResult, rerun } from "./rerun.js";
export { type RollbackInput, rollback } from "./rollback.js";
export { deleteSnippet, listSnippets, type SaveSnippetInput, saveSnippet } from "./snippets.js";
