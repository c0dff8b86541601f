import type { ErrorOutcome, ExecutionState, Outcome, PendingAction, RollbackReport } from "../outcome.js";
import type { Snippet } from "../snippets/snippets.js";
import { instrumentRuntime } from "../telemetry/instrument-runtime.js";
import { createApprovalAuthority, registerApprovalAuthority } from "./approval-authority.js";
import { createRuntimeContext } from "./context.js";
import type { DescribeOutput, SearchOutput } from "./discovery.js";
import type { ExecutionSummary } from "./log-view.js";
import { type ModelDescriptionOptions, modelDescription } from "./model-description.js";
import { type ApproveInput, approve } from "./operations/approve.js";
import { deleteExecution } from "./operations/delete.js";
import { execute, submit } from "./operations/execute.js";
import { expireStale } from "./operations/expire.js";
import {
  type ListQuery,
  listExecutions,
  listPending,
  type Page,
  type PendingQuery,
  readExecution,
} from "./operations/list.js";
import { readOutcome } from "./operations/outcome.js";
import { pruneExecutions } from "./operations/prune.js";
import { type RecoverOptions, recover } from "./operations/recover.js";
import { reject } from "./operations/reject.js";
import { rollback } from "./operations/rollback.js";
import { deleteSnippet, listSnippets, type SaveSnippetInput, saveSnippet } from "./operations/snippets.js";
import type { PassLoad } from "./pass-gate.js";
import { type CodemodeRuntimeOptions, DEFAULTS } from "./runtime-options.js";

export type { CodemodeRuntimeOptions } from "./runtime-options.js";

/**
 * The host-side runtime. `execute`, `approve` and `rollback` always resolve to data (R-RT-1).
 * Reads and control operations reject with `CodemodeError` — code `STORAGE_ERROR` when the
 * store fails, `BUSY` when the execution stayed held — and never report an outage as absence
 * (R-RT-3).
 */
export interface CodemodeRuntime {
  /** Runs new code as a new execution. */
  execute(input: { code: string }): Promise<Outcome>;
  /**
   * Stores new code as an execution without running it, for a worker to run with
   * `recover({ executionId })` (job queues); an error outcome when the code is refused or the
   * store fails.
   */
  submit(input: { code: string }): Promise<{ executionId: string } | ErrorOutcome>;
  /** Approves the pending action of a paused execution and resumes it. */
  approve(input: ApproveInput): Promise<Outcome>;
  /** Rejects the pending action: the execution ends `rejected`. False when that action was not pending. */
  reject(input: { executionId: string; seq: number; by?: string; reason?: string }): Promise<boolean>;
  /** Pending actions of paused executions, newest first, a page at a time; or of one execution. */
  pending(query?: PendingQuery | string): Promise<Page<PendingAction>>;
  /** Executions, newest first, as summaries, a page at a time; filter by status. */
  executions(query?: ListQuery): Promise<Page<ExecutionSummary>>;
  /** One execution with its log, or null when there is none. */
  execution(executionId: string): Promise<ExecutionState | null>;
  /** The current `Outcome` of any execution, for a process that did not run it; null when there is none. */
  outcome(executionId: string): Promise<Outcome | null>;
  /** Reverts applied calls, newest first, with each tool's `revert`; a report, never a throw. */
  rollback(input: { executionId: string }): Promise<RollbackReport>;
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

/**
 * Creates the host-side runtime. Bad options throw here; nothing after creation throws for what
 * the model's code or a stale id did (R-RT-1). Each operation lives in its own module under
 * `operations/`; this function only wires them to one context.
 *
 * @example
 * const runtime = createCodemodeRuntime({ connectors: [github] });
 * const outcome = await runtime.execute({ code: "async () => github.list_issues({ repo: 'acme/web' })" });
 * if (outcome.status === "paused") await runtime.approve({ executionId: outcome.executionId });
 */
export function createCodemodeRuntime(options: CodemodeRuntimeOptions = {}): CodemodeRuntime {
  const context = createRuntimeContext(options);
  const handle: CodemodeRuntime = {
    execute: (input) => execute(context, input),
    submit: (input) => submit(context, input),
    approve: (input) => approve(context, input),
    reject: (input) => reject(context, input),
    pending: (query) => listPending(context, typeof query === "string" ? { executionId: query } : (query ?? {})),
    executions: (query) => listExecutions(context, query),
    execution: (executionId) => readExecution(context, executionId),
    outcome: (executionId) => readOutcome(context, executionId),
    rollback: (input) => rollback(context, String(input?.executionId ?? "")),
    deleteExecution: (executionId) => deleteExecution(context, String(executionId)),
    pruneExecutions: (keep = DEFAULTS.maxExecutions) => pruneExecutions(context, keep),
    recover: (recoverOptions) => recover(context, recoverOptions),
    expirePaused: (expireOptions) => expireStale(context, expireOptions?.maxAgeMs ?? 24 * 60 * 60 * 1000),
    saveSnippet: (name, input) => saveSnippet(context, name, input),
    snippets: () => listSnippets(context),
    deleteSnippet: (name) => deleteSnippet(context, name),
    search: (query) => context.discovery.search(query),
    describe: (target) => context.discovery.describe(target),
    modelDescription: (descriptionOptions) =>
      modelDescription(context.connectors.values(), {
        ...descriptionOptions,
        allowNetwork: context.settings.allowNetwork,
      }),
    load: () => context.passes.load(),
    async close() {
      if (context.ownsExecutor) await context.executor.close();
    },
  };
  const runtime = instrumentRuntime(handle, context.telemetry);
  registerApprovalAuthority(
    runtime,
    createApprovalAuthority(options.approvalSecret, options.chatApprovals, context.connectors),
  );
  return runtime;
}
