import type { ModelDescriptionOptions } from "../../adapters/model-description.js";
import type { ErrorOutcome, ExecutionState, Outcome, PendingAction, RollbackReport } from "../../outcome.js";
import type { Snippet } from "../../snippets/snippets.js";
import type { DescribeOutput, SearchOutput } from "../catalogue/index.js";
import type { PassLoad } from "../context/index.js";
import type {
  ApproveInput,
  CancelInput,
  CancelReport,
  DecideInput,
  ForkInput,
  ListQuery,
  ModelTool,
  NewRunInput,
  Page,
  PendingQuery,
  RecoverOptions,
  ReplayCheckQuery,
  ReplayCheckReport,
  RerunQuery,
  RerunReport,
  RollbackInput,
  SaveSnippetInput,
  ToolCallInput,
} from "../operations/index.js";
import type { ExecutionSummary } from "../records/index.js";

/**
 * The host-side runtime. `execute`, `approve` and `rollback` always resolve to data (R-RT-1).
 * Reads and control operations reject with `CodemodeError` — code `STORAGE_ERROR` when the
 * store fails, `BUSY` when the execution stayed held — and never report an outage as absence
 * (R-RT-3).
 */
export interface CodemodeRuntime {
  /** Runs new code as a new execution. */
  execute(input: NewRunInput): Promise<Outcome>;
  /**
   * Calls one tool the model calls directly (`callers` includes "model") as a one-call run, through
   * the same log and approvals as a program's call: a gated tool pauses it, and `approve` /
   * `decide` resume it. The outcome's result is the tool's. NOT_FOUND for a tool that is unknown
   * or not the model's to call.
   */
  callTool(input: ToolCallInput): Promise<Outcome>;
  /** The tools the model calls directly, for adapters that list them next to the Code Mode tool. */
  modelTools(): ModelTool[];
  /**
   * Stores new code as an execution without running it, for a worker to run with
   * `recover({ executionId })` (job queues); an error outcome when the code is refused or the
   * store fails.
   */
  submit(input: NewRunInput): Promise<{ executionId: string } | ErrorOutcome>;
  /** Approves a pending action (`seq`), or every action pending now, and resumes the execution. */
  approve(input: ApproveInput): Promise<Outcome>;
  /**
   * Decides pending actions one by one (R-AP-9): approve, edit (other arguments, checked by the
   * tool's schema) or deny (the call rejects inside the program with an `ApprovalDenied` error),
   * with an optional grant for further calls of the same method. Undecided actions stay pending.
   * NOT_PAUSED for a seq not pending now, INVALID_DECISION for a malformed decision; nothing
   * changes on a refusal.
   */
  decide(input: DecideInput): Promise<Outcome>;
  /** Rejects the pending action: the execution ends `rejected`. False when that action was not pending. */
  reject(input: { executionId: string; seq: number; by?: string; reason?: string }): Promise<boolean>;
  /**
   * Cancels a run wherever it stands: a paused one is rejected with its waiting actions closed, a
   * running pass is stopped, in this process or another (it reads the request within about a
   * second), and the run ends `rejected` with code CANCELLED. See `CancelReport`.
   */
  cancel(input: CancelInput): Promise<CancelReport>;
  /** Pending actions of paused executions, newest first, a page at a time; or of one execution. */
  pending(query?: PendingQuery | string): Promise<Page<PendingAction>>;
  /** Executions, newest first, as summaries, a page at a time; filter by status. */
  executions(query?: ListQuery): Promise<Page<ExecutionSummary>>;
  /** One execution with its log, or null when there is none. */
  execution(executionId: string): Promise<ExecutionState | null>;
  /** The current `Outcome` of any execution, for a process that did not run it; null when there is none. */
  outcome(executionId: string): Promise<Outcome | null>;
  /** Reverts applied calls, newest first, with each tool's `revert`; a report, never a throw. */
  rollback(input: RollbackInput): Promise<RollbackReport>;
  /** Deletes an execution and its log (disposing it when it was not terminal). False when unknown. */
  deleteExecution(executionId: string): Promise<boolean>;
  /** Deletes terminal executions beyond the newest `keep` (default 50, at most 100 per call); returns how many. */
  pruneExecutions(keep?: number): Promise<number>;
  /**
   * Resumes `running` executions whose host is gone (lease lapsed) with a new pass each (R-RP-4,
   * R-RP-4b); `[]` when there is nothing to recover. A live worker's run is never taken.
   */
  recover(options?: RecoverOptions): Promise<Outcome[]>;
  /**
   * Runs stored code against its recorded log with the current connectors, tools and schemas,
   * never calling a tool and changing nothing in the store: one run by id, or the runs a query
   * picks (default: the paused ones, newest first, at most 100). Each result is `ok`, or gives the
   * first divergence with its diff, recorded against now. Run it in CI after changing tools.
   */
  replayCheck(target?: string | ReplayCheckQuery): Promise<ReplayCheckReport>;
  /**
   * A new execution whose log is the original's prefix before `fromSeq`, with the same code or
   * `code`: the prefix replays, every call from `fromSeq` on runs live under the usual approvals.
   * The original is untouched; the fork's record says where it came from (`forkedFrom`).
   */
  fork(input: ForkInput): Promise<Outcome>;
  /**
   * Runs failed executions again, each as a new pass of its own run (default: those that failed
   * with STORAGE_ERROR or BUSY, newest first, at most 100), and reports each outcome or why a run
   * was skipped. The log is kept: what was recorded replays, a call left under way runs again with
   * its idempotency key. `dryRun` picks and checks without running.
   */
  rerun(query?: RerunQuery): Promise<RerunReport>;
  /**
   * Paused runs older than `maxAgeMs` (default 24 h) become rejected; running runs whose host is
   * gone become error. Call `recover` first to resume such runs instead of ending them.
   */
  expirePaused(options?: { maxAgeMs?: number }): Promise<string[]>;
  /** Saves an execution's code as a snippet the model can find and run (R-SN-1); null for an unknown execution. */
  saveSnippet(name: string, input: SaveSnippetInput): Promise<Snippet | null>;
  snippets(): Promise<Snippet[]>;
  deleteSnippet(name: string): Promise<boolean>;
  /** Ranks connector methods and snippets, like `codemode.search` in the sandbox (R-SN-3). */
  search(query: string): Promise<SearchOutput>;
  /** TypeScript declarations of a connector or method, or a snippet's source, like `codemode.describe`. */
  describe(target: string): Promise<DescribeOutput>;
  /** The text that tells a model how to use this runtime's Code Mode tool (R-AI-2). */
  modelDescription(options?: Omit<ModelDescriptionOptions, "allowNetwork">): string;
  /** The passes running and waiting in this runtime now (`maxPassesInFlight`), read in memory. */
  load(): PassLoad;
  /** Releases isolates and timers the runtime holds. */
  close(): Promise<void>;
}
