import { modelDescription } from "../../adapters/model-description.js";
import { createApprovalAuthority, registerApprovalAuthority } from "../approvals/index.js";
import { type CodemodeRuntimeOptions, createRuntimeContext, DEFAULTS } from "../context/index.js";
import {
  approve,
  callTool,
  cancel,
  decide,
  deleteExecution,
  deleteSnippet,
  execute,
  expireStale,
  fork,
  listExecutions,
  listPending,
  listSnippets,
  type ModelTool,
  modelTools,
  pruneExecutions,
  readExecution,
  readOutcome,
  recover,
  reject,
  replayCheck,
  rerun,
  rollback,
  saveSnippet,
  submit,
} from "../operations/index.js";
import { instrumentRuntime } from "./instrument-runtime.js";
import type { CodemodeRuntime } from "./interface.js";

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
  let listedModelTools: ModelTool[] | undefined;
  const handle: CodemodeRuntime = {
    execute: (input) => execute(context, input),
    callTool: (input) => callTool(context, input),
    modelTools: () => {
      listedModelTools ??= modelTools(context);
      return [...listedModelTools];
    },
    submit: (input) => submit(context, input),
    approve: (input) => approve(context, input),
    decide: (input) => decide(context, input),
    reject: (input) => reject(context, input),
    cancel: (input) => cancel(context, input),
    pending: (query) => listPending(context, typeof query === "string" ? { executionId: query } : (query ?? {})),
    executions: (query) => listExecutions(context, query),
    execution: (executionId) => readExecution(context, executionId),
    outcome: (executionId) => readOutcome(context, executionId),
    rollback: (input) => rollback(context, input),
    deleteExecution: (executionId) => deleteExecution(context, String(executionId)),
    pruneExecutions: (keep = DEFAULTS.maxExecutions) => pruneExecutions(context, keep),
    recover: (recoverOptions) => recover(context, recoverOptions),
    replayCheck: (target) => replayCheck(context, target),
    fork: (input) => fork(context, input),
    rerun: (query) => rerun(context, query),
    expirePaused: (expireOptions) => expireStale(context, expireOptions?.maxAgeMs ?? 24 * 60 * 60 * 1000),
    saveSnippet: (name, input) => saveSnippet(context, name, input),
    snippets: () => listSnippets(context),
    deleteSnippet: (name) => deleteSnippet(context, name),
    search: (query) => context.discovery.search(query),
    describe: (target) => context.discovery.describe(target),
    modelDescription: (descriptionOptions) =>
      modelDescription(context.codeConnectors.values(), {
        ...descriptionOptions,
        allowNetwork: context.settings.allowNetwork,
      }),
    load: () => ({ ...context.passes.load(), sandbox: context.sandbox(), sandboxHost: context.sandboxHost }),
    async close() {
      if (context.ownsExecutor) await context.executor.close();
    },
  };
  const runtime = instrumentRuntime(handle, context.telemetry);
  registerApprovalAuthority(
    runtime,
    createApprovalAuthority(options.approvalSecret, options.chatApprovals, context.connectors, context.warn),
  );
  return runtime;
}
