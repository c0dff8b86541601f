import { randomUUID } from "node:crypto";
import { type Connector, codeMayCall, type ToolDefinition } from "../../connectors/define-connector.js";
import { type ArgsValidator, createArgsValidator, createResultValidator } from "../../connectors/validate-args.js";
import type { ExecutionIndex } from "../../log/execution-index.js";
import { ExecutionStore } from "../../log/execution-store.js";
import { createKeyvExecutionIndex } from "../../log/kv-execution-index.js";
import type { LeaseSettings } from "../../log/lease.js";
import type { LockProvider } from "../../log/lock.js";
import { storageErrorsOf } from "../../log/storage-errors-index.js";
import type { Executor } from "../../sandbox/executor.js";
import { SnippetStore } from "../../snippets/snippets.js";
import type { Telemetry } from "../../telemetry/interface.js";
import { createTelemetry } from "../../telemetry/telemetry.js";
import { APPROVAL_POLICY_TIMEOUT_MS, type ApprovalPolicy } from "../approvals/index.js";
import { Discovery } from "../catalogue/index.js";
import { type PassesHere, PassGate, type PassLoad } from "./admission.js";
import { chooseExecutor } from "./choose-executor.js";
import { type CodemodeRuntimeOptions, checkOptions, type Settings } from "./options.js";

/**
 * Everything a runtime operation works with, built once per runtime. Operations are modules
 * over this object; none calls back into the runtime handle.
 */
export interface RuntimeContext {
  readonly settings: Settings;
  readonly connectors: ReadonlyMap<string, Connector>;
  readonly store: ExecutionStore;
  /** Listings: the store's native index, or the generic one over its Keyv. */
  readonly index: ExecutionIndex;
  readonly lock: LockProvider;
  /** How every lease on an execution is taken (see `ExecutionLease`). */
  readonly leases: LeaseSettings;
  readonly executor: Executor;
  /** Which sandbox passes run in (see `PassLoad.sandbox`). */
  sandbox(): PassLoad["sandbox"];
  /** Where passes run (see `PassLoad.sandboxHost`). */
  readonly sandboxHost: PassLoad["sandboxHost"];
  readonly ownsExecutor: boolean;
  /** Admits passes to the executor, `maxPassesInFlight` at a time. */
  readonly passes: PassGate;
  /** The passes running in this runtime now, by execution id, for `cancel` (see cancel-watch.ts). */
  readonly passesHere: PassesHere;
  /**
   * Who this runtime's passes run for, to an executor that keeps isolates warm: its name and an
   * id of this instance, so that two runtimes sharing an executor never share an isolate.
   */
  readonly partition: string;
  /** Argument validators by "connector.method" (R-CON-2); tools without a schema have none. */
  readonly validators: ReadonlyMap<string, ArgsValidator>;
  /** Result validators by "connector.method" (R-CN-OA); tools without an `outputSchema` have none. */
  readonly resultValidators: ReadonlyMap<string, ArgsValidator>;
  /**
   * The connectors as programs see them: only tools whose `callers` include "code", and only
   * connectors that keep one (globals, search, describe, the model's description).
   */
  readonly codeConnectors: ReadonlyMap<string, Connector>;
  readonly discovery: Discovery;
  readonly snippets: SnippetStore;
  readonly transformResult: ((result: unknown) => unknown) | undefined;
  /** Decides calls that require approval before they pause (R-AP-10); none by default. */
  readonly approvalPolicy: ApprovalPolicy | undefined;
  readonly approvalPolicyTimeoutMs: number;
  /** Connectors the code names as identifiers (R-AP-5). */
  connectorsIn(code: string): string[];
  /** Reports what is swallowed on purpose (hook errors, a lagging listing). */
  warn(message: string): void;
  /** OpenTelemetry hook points; pass-throughs without the `telemetry` option. */
  readonly telemetry: Telemetry;
}

/** Checks the options (bad ones throw here, R-RT-1) and builds the context. */
export function createRuntimeContext(options: CodemodeRuntimeOptions): RuntimeContext {
  const settings = checkOptions(options);
  const { connectors, keyv, lock } = settings;
  const store = new ExecutionStore(keyv, settings.name);
  const index = storageErrorsOf(
    settings.index?.forRuntime(settings.name) ??
      createKeyvExecutionIndex(keyv, settings.name, lock, {
        leaseMs: settings.leaseMs,
        lockWaitMs: settings.lockWaitMs,
      }),
  );
  const snippets = new SnippetStore(store);
  const logger = options.logger ?? console;
  const chosen =
    typeof options.executor === "object" && options.executor !== null
      ? undefined
      : chooseExecutor(options.executor, {
          timeoutMs: settings.timeoutMs,
          memoryMb: settings.memoryMb,
          host: options.sandboxHost,
          threads: options.sandboxThreads,
          processes: options.sandboxProcesses,
          prewarm: options.prewarmIsolates ?? 0,
          isolateReuse: options.isolateReuse,
          logger,
        });
  const executor: Executor = chosen ?? (options.executor as Executor);
  const codeConnectors = codeView(connectors);
  // A connector counts as used when its name appears in the code as an identifier (R-AP-5).
  const patterns = [...connectors.keys()].map((name) => ({
    name,
    pattern: new RegExp(`(^|[^\\w$.])${name.replace(/\$/g, "\\$")}(?![\\w$])`),
  }));
  return {
    settings,
    connectors,
    store,
    index,
    lock,
    leases: {
      lock,
      leaseMs: settings.leaseMs,
      keyOf: (executionId) => store.keys.lock(executionId),
      readStatus: async (executionId) => (await store.readHead(executionId))?.status,
    },
    executor,
    sandbox: () => chosen?.sandbox ?? "custom",
    sandboxHost: chosen?.host ?? "custom",
    partition: `${settings.name}:${randomUUID()}`,
    ownsExecutor: typeof options.executor !== "object" || options.executor === null,
    passes: new PassGate(settings.maxPassesInFlight),
    passesHere: new Map(),
    validators: validatorsOf(connectors, "inputSchema", createArgsValidator),
    resultValidators: validatorsOf(connectors, "outputSchema", createResultValidator),
    codeConnectors,
    discovery: new Discovery(codeConnectors, snippets),
    snippets,
    transformResult: options.transformResult,
    approvalPolicy: options.approvalPolicy,
    approvalPolicyTimeoutMs: options.approvalPolicyTimeoutMs ?? APPROVAL_POLICY_TIMEOUT_MS,
    connectorsIn: (code) => patterns.filter(({ pattern }) => pattern.test(code)).map(({ name }) => name),
    warn: (message) => logger.warn(`[codemode] ${message}`),
    telemetry: createTelemetry(options.telemetry, settings.name, (message) => logger.warn(`[codemode] ${message}`)),
  };
}

function validatorsOf(
  connectors: ReadonlyMap<string, Connector>,
  schema: "inputSchema" | "outputSchema",
  create: (path: string, tool: ToolDefinition) => ArgsValidator,
): Map<string, ArgsValidator> {
  const validators = new Map<string, ArgsValidator>();
  for (const connector of connectors.values()) {
    for (const [method, tool] of Object.entries(connector.tools)) {
      if (tool[schema] !== undefined)
        validators.set(`${connector.name}.${method}`, create(`${connector.name}.${method}`, tool));
    }
  }
  return validators;
}

function codeView(connectors: ReadonlyMap<string, Connector>): Map<string, Connector> {
  const view = new Map<string, Connector>();
  for (const [name, connector] of connectors) {
    const tools = Object.entries(connector.tools).filter(([, tool]) => codeMayCall(tool));
    if (tools.length === Object.keys(connector.tools).length) view.set(name, connector);
    else if (tools.length > 0) view.set(name, { ...connector, tools: Object.fromEntries(tools) });
  }
  return view;
}
