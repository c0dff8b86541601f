import Keyv from "keyv";
import { type Connector, type ConnectorDefinition, connectorProblems } from "../../connectors/define-connector.js";
import { schemaProblems } from "../../connectors/validate-args.js";
import { errorMessage } from "../../error-message.js";
import type { ExecutionIndexProvider } from "../../log/execution-index.js";
import type { KeyvLike } from "../../log/interface.js";
import { createInProcessLock, type LockProvider } from "../../log/lock.js";
import type { PendingAction } from "../../outcome.js";
import type { Executor } from "../../sandbox/executor.js";
import { type IsolateReuse, isolateReuseSettings } from "../../sandbox/isolated-vm/isolate-reuse.js";
import { telemetryProblems } from "../../telemetry/telemetry.js";
import type { TelemetryOptions } from "../../telemetry/telemetry-options.js";
import type { ApprovalPolicy } from "../approvals/index.js";
import { approvalOptionProblems } from "../approvals/index.js";
import { defaultMaxPassesInFlight } from "./admission.js";
import type { ExecutorName } from "./choose-executor.js";

export interface CodemodeRuntimeOptions {
  /** Connectors the model's code sees as globals. */
  connectors?: ReadonlyArray<Connector | ConnectorDefinition>;
  /**
   * Where executions live: a Keyv instance (≥ 5.6), or `{ keyv, lock, index? }` from
   * `@codemode/storage` for stores shared by several processes (`index` lists executions with
   * the store's native structures; without it a generic listing over the Keyv is used).
   * Default: in-memory Keyv.
   */
  storage?: KeyvLike | { keyv: KeyvLike; lock: LockProvider; index?: ExecutionIndexProvider };
  /** Separates histories in one store. Default "default". */
  name?: string;
  /** Terminal executions kept when a new one starts. Default 50. */
  maxExecutions?: number;
  /**
   * Per pass: wall-clock timeout (`timeoutMs`, default 60 000 ms) and heap limit (`memoryMb`,
   * default 128 MB). Per execution, across its passes: the bytes its log may hold
   * (`maxLogBytes`, default 128 MiB) and its number of entries (`maxLogEntries`, default 10 000);
   * a run that would pass either ends VALUE_TOO_LARGE (see docs/security.md).
   */
  limits?: { timeoutMs?: number; memoryMb?: number; maxLogBytes?: number; maxLogEntries?: number };
  /** Replay-stable Date, Math.random and crypto in the sandbox (R-SB-6). Default true. */
  deterministic?: boolean;
  /** Gives the sandbox a host-run `fetch`, recorded like a step (R-SB-5). Default false. */
  allowNetwork?: boolean;
  /** Reshapes a completed result for the model; the record keeps the raw value (R-DV-3). */
  transformResult?: (result: unknown) => unknown;
  /**
   * Runs passes: `"isolated-vm"` (a fresh context per pass in a warm isolate, `isolateReuse`),
   * `"quickjs"` (QuickJS in WebAssembly, a fresh runtime per pass; no native addon), or an
   * `Executor` of your own. Default: isolated-vm where it loads, QuickJS otherwise (said once,
   * as a warning through `logger`) (`CODEMODE_EXECUTOR` in the environment chooses where the code does not).
   */
  executor?: Executor | ExecutorName;
  /**
   * Fresh isolates the default executor prepares ahead of need, so a pass that finds no warm
   * isolate does not wait for one. Default 0.
   */
  prewarmIsolates?: number;
  /**
   * Where the default executor runs passes (R-SB-8), `"process"` by default:
   * - `"process"`: in sandbox processes, children of this process shared by its runtimes
   *   (`sandboxProcesses` of them). Whatever a program does — an abort of V8 on memory, a loop
   *   inside a built-in that no engine interrupts — ends a sandbox process at worst, never this
   *   one; the pass ends as data (TIMEOUT, MEMORY_LIMIT, SANDBOX_CRASHED). Where child processes
   *   cannot be started, worker threads are used and that is said once.
   * - `"thread"`: on `sandboxThreads` worker threads of this process (default 2): a program that
   *   loops holds a sandbox thread, not this one; a fault of V8 still ends this process.
   * - `"inline"`: on this thread: the fastest, and the least contained.
   * `CODEMODE_SANDBOX_HOST` in the environment chooses where the code does not. docs/security.md
   * says what each host defends against.
   */
  sandboxHost?: "process" | "thread" | "inline";
  /** Sandbox processes of the `"process"` host; each pass goes to the least busy. Default 2. */
  sandboxProcesses?: number;
  /**
   * Worker threads of the `"thread"` host (`createWorkerThreadExecutor` from
   * `@codemode/core/sandbox`). Each host call pays a hop between threads; `prewarmIsolates` are
   * spread over the threads. Given without `sandboxHost`, it chooses as it did before sandbox
   * processes: a number of threads chooses `"thread"`, 0 chooses `"inline"`.
   */
  sandboxThreads?: number;
  /**
   * Warm isolates for the default executor (`IsolatedVmExecutorOptions.isolateReuse`): each pass
   * gets a fresh context of its own in an isolate that served earlier passes of this runtime
   * (never another runtime's), which skips creating and disposing an isolate per pass. `true`
   * takes the defaults; `false` gives every pass a fresh isolate. Default on. docs/security.md
   * says what a shared isolate does not hide, and when to turn it off.
   */
  isolateReuse?: IsolateReuse | boolean;
  /**
   * Passes that run at once in this runtime; more wait their turn, first come first served, so a
   * process given more work than it can hold slows down instead of running out of memory.
   * `runtime.load()` reports the queue. Default: as many as half the machine's memory (or the
   * process's memory limit) holds at `limits.memoryMb` each, from 4 to 256 (see docs/operating.md).
   */
  maxPassesInFlight?: number;
  /** How long a control operation waits for an execution held by another (then BUSY). Default 5 000 ms. */
  lockWaitMs?: number;
  /** Lease on an execution while a pass runs; renewed, so it lapses only when the host is gone. Default 30 000 ms. */
  leaseMs?: number;
  /**
   * Whether a chat (the browser of a useChat UI, through `syncApprovals`, `syncModelApprovals` or
   * the Code Mode tool's approval flow) or an MCP client (elicitation, when the MCP server's
   * `elicitApproval` is on) may approve or deny a pending action (R-AP-11): `true` (default) for
   * every action whose tool does not set `approvers: "operator"`, `false` for none (operators
   * decide; the chat only shows "paused"), or a function of the action (one that throws allows
   * nothing). A chat decides only approval requests this server signed for it
   * (`approvalSecret`); anything else is refused and nothing runs.
   */
  chatApprovals?: boolean | ((action: PendingAction) => boolean);
  /**
   * The key (at least 32 bytes) that signs the approval requests the server issues to a chat,
   * over execution id, seq, tool call id and code. Give every process that serves the same chat
   * the same secret. Default: random bytes for this runtime, so a request issued by another
   * process, or before a restart, is refused.
   */
  approvalSecret?: string | Uint8Array;
  /**
   * Decides calls that require approval before they pause (R-AP-10), possibly asynchronously (an
   * OPA query, say): "approve", "deny", "ask", or `{ decision, reason }`. Its decisions are
   * recorded with `by: "policy"`. One that throws, or answers after `approvalPolicyTimeoutMs`,
   * counts as "ask".
   */
  approvalPolicy?: ApprovalPolicy;
  /** How long the approval policy may take for one call before it counts as "ask". Default 5 000 ms. */
  approvalPolicyTimeoutMs?: number;
  /** Where swallowed hook errors are reported (R-RS-3). Default: console. */
  logger?: { warn(message: string): void };
  /**
   * OpenTelemetry spans for operations, passes and calls (`{ tracer?, recordValues? }`, see
   * `@codemode/core/telemetry`). Default: none, and `@opentelemetry/api` is never loaded.
   */
  telemetry?: TelemetryOptions;
}

export const DEFAULTS = {
  name: "default",
  maxExecutions: 50,
  timeoutMs: 60_000,
  memoryMb: 128,
  maxLogBytes: 128 * 1024 * 1024,
  maxLogEntries: 10_000,
  lockWaitMs: 5_000,
  leaseMs: 30_000,
};

export interface Settings {
  connectors: Map<string, Connector>;
  keyv: KeyvLike;
  lock: LockProvider;
  index: ExecutionIndexProvider | undefined;
  name: string;
  maxExecutions: number;
  timeoutMs: number;
  memoryMb: number;
  maxLogBytes: number;
  maxLogEntries: number;
  deterministic: boolean;
  allowNetwork: boolean;
  lockWaitMs: number;
  leaseMs: number;
  maxPassesInFlight: number;
}

/** Host programming errors surface here, at creation, as one TypeError listing them all. */
export function checkOptions(options: CodemodeRuntimeOptions): Settings {
  const problems: string[] = [];
  const connectors = new Map<string, Connector>();
  for (const definition of options.connectors ?? []) {
    const found = connectorProblems(definition);
    problems.push(...found);
    if (found.length > 0) continue;
    if (connectors.has(definition.name)) problems.push(`two connectors are named "${definition.name}"`);
    connectors.set(definition.name, { ...definition, kind: "codemode-connector" });
    for (const [method, tool] of Object.entries(definition.tools))
      problems.push(...schemaProblems(`${definition.name}.${method}`, tool));
  }
  const positive = (value: unknown, label: string) => {
    if (value !== undefined && (typeof value !== "number" || !Number.isFinite(value) || value <= 0))
      problems.push(`${label} must be a positive number`);
  };
  positive(options.maxExecutions, "maxExecutions");
  positive(options.limits?.timeoutMs, "limits.timeoutMs");
  positive(options.limits?.memoryMb, "limits.memoryMb");
  positive(options.limits?.maxLogBytes, "limits.maxLogBytes");
  positive(options.limits?.maxLogEntries, "limits.maxLogEntries");
  positive(options.lockWaitMs, "lockWaitMs");
  positive(options.leaseMs, "leaseMs");
  positive(options.approvalPolicyTimeoutMs, "approvalPolicyTimeoutMs");
  const wholeFrom = (value: unknown, label: string, least: number) => {
    if (value !== undefined && (!Number.isInteger(value) || (value as number) < least || (value as number) > 64))
      problems.push(`${label} must be a whole number from ${least} to 64`);
  };
  wholeFrom(options.prewarmIsolates, "prewarmIsolates", 0);
  wholeFrom(options.sandboxThreads, "sandboxThreads", 0);
  wholeFrom(options.sandboxProcesses, "sandboxProcesses", 1);
  if (
    options.sandboxHost !== undefined &&
    options.sandboxHost !== "process" &&
    options.sandboxHost !== "thread" &&
    options.sandboxHost !== "inline"
  )
    problems.push('sandboxHost must be "process", "thread" or "inline"');
  if (
    options.maxPassesInFlight !== undefined &&
    (!Number.isInteger(options.maxPassesInFlight) || options.maxPassesInFlight < 1)
  ) {
    problems.push("maxPassesInFlight must be a whole number of at least 1");
  }
  if (options.isolateReuse !== undefined) {
    try {
      isolateReuseSettings(options.isolateReuse);
    } catch (error) {
      problems.push(errorMessage(error));
    }
    if (typeof options.executor === "object" && options.isolateReuse !== false)
      problems.push(
        "isolateReuse configures the default executor: leave it out when passing an executor (give the executor isolateReuse)",
      );
  }
  if (typeof options.executor === "object" && (options.sandboxThreads ?? 0) > 0)
    problems.push("sandboxThreads configures the default executor: leave it out when passing an executor");
  if (
    typeof options.executor === "object" &&
    (options.sandboxHost !== undefined || options.sandboxProcesses !== undefined)
  )
    problems.push(
      "sandboxHost and sandboxProcesses configure the default executor: leave them out when passing an executor",
    );
  if (
    options.executor !== undefined &&
    options.executor !== "quickjs" &&
    options.executor !== "isolated-vm" &&
    (typeof options.executor !== "object" ||
      options.executor === null ||
      typeof options.executor.runPass !== "function")
  )
    problems.push('executor must be "isolated-vm", "quickjs" or an Executor (an object with runPass and close)');
  if (options.limits?.memoryMb !== undefined && options.limits.memoryMb < 8)
    problems.push("limits.memoryMb must be at least 8");
  const name = options.name ?? DEFAULTS.name;
  if (typeof name !== "string" || !/^[\w.-]{1,64}$/.test(name))
    problems.push(`name must be 1–64 letters, digits, "_", "-" or "."`);
  if (options.transformResult !== undefined && typeof options.transformResult !== "function")
    problems.push("transformResult must be a function");
  problems.push(...telemetryProblems(options.telemetry));
  problems.push(...approvalOptionProblems(options.approvalSecret, options.chatApprovals));
  if (options.approvalPolicy !== undefined && typeof options.approvalPolicy !== "function")
    problems.push("approvalPolicy must be a function of the action");

  let keyv: KeyvLike;
  let lock: LockProvider;
  let index: ExecutionIndexProvider | undefined;
  const storage = options.storage;
  if (storage === undefined) {
    keyv = embeddedStore();
    lock = createInProcessLock();
  } else if (isKeyvLike(storage)) {
    keyv = storage;
    lock = inProcessLockFor(storage);
  } else if (typeof storage === "object" && storage !== null && isKeyvLike((storage as { keyv?: unknown }).keyv)) {
    keyv = storage.keyv;
    lock = storage.lock;
    index = (storage as { index?: ExecutionIndexProvider }).index;
    if (!lock || typeof lock.acquire !== "function" || typeof lock.isHeld !== "function")
      problems.push("storage.lock must be a LockProvider");
    if (index !== undefined && typeof index?.forRuntime !== "function")
      problems.push("storage.index must be an ExecutionIndexProvider");
  } else {
    problems.push("storage must be a Keyv instance or { keyv, lock }");
    keyv = embeddedStore();
    lock = createInProcessLock();
  }
  if (problems.length > 0) throw new TypeError(`createCodemodeRuntime: ${problems.join("; ")}`);
  return {
    connectors,
    keyv,
    lock,
    index,
    name,
    maxExecutions: options.maxExecutions ?? DEFAULTS.maxExecutions,
    timeoutMs: options.limits?.timeoutMs ?? DEFAULTS.timeoutMs,
    memoryMb: options.limits?.memoryMb ?? DEFAULTS.memoryMb,
    maxLogBytes: options.limits?.maxLogBytes ?? DEFAULTS.maxLogBytes,
    maxLogEntries: options.limits?.maxLogEntries ?? DEFAULTS.maxLogEntries,
    deterministic: options.deterministic ?? true,
    allowNetwork: options.allowNetwork ?? false,
    lockWaitMs: options.lockWaitMs ?? DEFAULTS.lockWaitMs,
    leaseMs: options.leaseMs ?? DEFAULTS.leaseMs,
    maxPassesInFlight:
      options.maxPassesInFlight ?? defaultMaxPassesInFlight(options.limits?.memoryMb ?? DEFAULTS.memoryMb),
  };
}

/**
 * One in-process lock per Keyv instance: two runtimes of one process sharing a store must
 * serialise approvals of the same execution (R-AP-6), which two separate locks would not.
 */
const inProcessLocks = new WeakMap<KeyvLike, LockProvider>();
function inProcessLockFor(keyv: KeyvLike): LockProvider {
  let lock = inProcessLocks.get(keyv);
  if (!lock) {
    lock = createInProcessLock();
    inProcessLocks.set(keyv, lock);
  }
  return lock;
}

function isKeyvLike(value: unknown): value is KeyvLike {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as KeyvLike).get === "function" &&
    typeof (value as KeyvLike).set === "function" &&
    typeof (value as KeyvLike).delete === "function"
  );
}

/**
 * The default store: a Keyv over a Map in this process. It keeps Keyv's records as objects: the
 * runtime's values are text already, and a JSON wrapper around each would cost a stringify per
 * write and a parse per read of every log entry, for nothing that leaves the process.
 */
function embeddedStore(): KeyvLike {
  return new Keyv({ serialize: undefined, deserialize: undefined }) as unknown as KeyvLike;
}
