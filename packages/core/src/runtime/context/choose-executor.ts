import { createRequire } from "node:module";
import { errorMessage } from "../../error-message.js";
import type { Executor, PassRequest, PassResult } from "../../sandbox/executor.js";
import type { IsolateReuse } from "../../sandbox/isolated-vm/isolate-reuse.js";

/** The sandboxes the runtime can build by name (`executor` option, `CODEMODE_EXECUTOR`). */
export type ExecutorName = "isolated-vm" | "quickjs";

/**
 * Where the runtime's own executor runs passes (`sandboxHost` option, `CODEMODE_SANDBOX_HOST`):
 * in sandbox processes of their own (the default), on worker threads of this process, or on
 * this thread. docs/security.md says what each one defends against.
 */
export type SandboxHostName = "process" | "thread" | "inline";

/** The runtime's own executor, which says which sandbox it loaded and where it runs passes. */
export interface ChosenExecutor extends Executor {
  readonly sandbox: ExecutorName;
  readonly host: SandboxHostName;
}

/** What the default executor is built with (the runtime's limits and sandbox options). */
export interface ExecutorSettings {
  timeoutMs: number;
  memoryMb: number;
  /** Where passes run (`sandboxHost`); undefined for the default (see `hostOf`). */
  host: SandboxHostName | undefined;
  /** Worker threads (`sandboxThreads`); undefined for the sandbox's default. */
  threads: number | undefined;
  /** Sandbox processes (`sandboxProcesses`); undefined for the default (2). */
  processes: number | undefined;
  prewarm: number;
  isolateReuse: IsolateReuse | boolean | undefined;
  /** Where a fallback to QuickJS is said, once per process. */
  logger: { warn(message: string): void };
}

/**
 * The executor a runtime builds itself: by name, or, without one, isolated-vm where it loads and
 * QuickJS otherwise (`CODEMODE_EXECUTOR` in the environment chooses where the code does not).
 * The sandbox is loaded by a dynamic import, started when the runtime is created and awaited by
 * the first pass, so `@codemode/core` imports on a runtime without isolated-vm (Node 22, Bun,
 * Deno, a host without native addons) and the addon is only loaded when it is the one used. A choice that cannot load fails each pass with a SANDBOX_ERROR that
 * says why, never the process. Which sandbox it is (`sandbox`) is known from the start; the
 * fallback to QuickJS is said when the first pass runs, so a process that runs no program (a
 * listing, an approval) says nothing about sandboxes.
 */
export function chooseExecutor(name: ExecutorName | undefined, settings: ExecutorSettings): ChosenExecutor {
  const chosen = name ?? executorFromEnvironment();
  const host = hostOf(settings);
  let loading: Promise<Executor> | undefined;
  let loaded: ExecutorName | undefined;
  /** The executor once loaded, for what must not wait for it (`anticipate`). */
  let ready: Executor | undefined;
  let closed = false;
  const load = (): Promise<Executor> => {
    loading ??= (chosen ? build(chosen, host, settings) : buildWhicheverLoads(host, settings)).then(
      ({ name, executor }) => {
        loaded = name;
        ready = executor;
        // Closed while loading: the executor is closed as soon as it exists.
        if (closed) void executor.close();
        return executor;
      },
    );
    return loading;
  };
  // Loaded now, in the background: the first pass should not wait for the import.
  load().catch(() => undefined);
  let decided: ExecutorName | undefined;
  return {
    get sandbox() {
      decided ??= loaded ?? chosen ?? (isolatedVmProblemNow() === undefined ? "isolated-vm" : "quickjs");
      return decided;
    },
    host,
    anticipate(code: string): void {
      if (!closed) ready?.anticipate?.(code);
    },
    async runPass(request: PassRequest): Promise<PassResult> {
      if (closed) return sandboxError("the executor was closed");
      let executor: Executor;
      try {
        executor = await load();
      } catch (error) {
        return sandboxError(errorMessage(error));
      }
      if (!chosen && loaded === "quickjs") sayFallback(settings);
      return executor.runPass(request);
    },
    async close() {
      closed = true;
      const executor = await loading?.catch(() => undefined);
      await executor?.close();
    },
  };
}

function sandboxError(message: string): PassResult {
  return { status: "failed", code: "SANDBOX_ERROR", error: message, logs: [] };
}

/** Said once per process, not once per runtime: a server may create many. */
let said = false;
/** Why isolated-vm does not load here, once found: "" when it loads. */
let problem: string | undefined;

/** The fallback to QuickJS, said once per process, when a pass first runs on it. */
function sayFallback(settings: ExecutorSettings): void {
  if (said) return;
  said = true;
  settings.logger.warn(
    `[codemode] sandbox: QuickJS in WebAssembly, because isolated-vm does not load here (${problem || "it did not load"}); pass executor: "quickjs" to choose it and silence this`,
  );
}

async function buildWhicheverLoads(host: SandboxHostName, settings: ExecutorSettings): Promise<Built> {
  // isolated-vm is the default; the fallback is said when a pass first runs on it.
  if ((await isolatedVmProblem()) === undefined) return build("isolated-vm", host, settings);
  return build("quickjs", host, settings);
}

/**
 * Why isolated-vm cannot be used on this runtime, or undefined when it loads: found once, by a
 * dynamic import (the runtime's background load does not hold its caller), kept for `...Now`.
 */
async function isolatedVmProblem(): Promise<string | undefined> {
  if (problem === undefined && runtimeRefusal() === undefined)
    problem = await import("isolated-vm").then(() => "", loadFailure);
  return isolatedVmProblemNow();
}

/** The same, found at once (the addon loaded through `require`), for `sandbox` before the first pass. */
function isolatedVmProblemNow(): string | undefined {
  if (problem === undefined) {
    problem = runtimeRefusal() ?? "";
    if (problem === "")
      try {
        createRequire(import.meta.url)("isolated-vm");
      } catch (error) {
        problem = loadFailure(error);
      }
  }
  return problem || undefined;
}

function loadFailure(error: unknown): string {
  return firstLine(errorMessage(error)) || "it did not load";
}

/** Bun and Deno run Node's npm packages but not V8 native addons built against Node. */
function runtimeRefusal(): string | undefined {
  const versions = process.versions as Record<string, string | undefined>;
  if (versions.bun) return `Bun ${versions.bun} cannot load V8 native addons`;
  if (versions.deno) return `Deno ${versions.deno} cannot load V8 native addons`;
  return undefined;
}

interface Built {
  name: ExecutorName;
  executor: Executor;
}

/**
 * QuickJS runs a program on the thread that runs the pass, so on the thread host its passes run
 * on worker threads by default: a program that loops holds a sandbox thread until its deadline,
 * never the runtime's (its leases, timers and other runs).
 */
export const QUICKJS_DEFAULT_THREADS = 2;

async function build(name: ExecutorName, host: SandboxHostName, settings: ExecutorSettings): Promise<Built> {
  const { timeoutMs, memoryMb, prewarm, isolateReuse } = settings;
  try {
    if (host === "process") {
      const { sharedProcessExecutor } = await import("../../sandbox/hosts/shared-process-executor.js");
      const processes = settings.processes ?? DEFAULT_PROCESSES;
      const options = {
        engine: name,
        processes,
        timeoutMs,
        memoryMb,
        prewarm: Math.ceil(prewarm / processes),
        ...(isolateReuse === undefined ? {} : { isolateReuse }),
      };
      return { name, executor: await withThreadFallback(sharedProcessExecutor(options), name, settings) };
    }
    if (host === "thread") {
      const threads = settings.threads || (name === "quickjs" ? QUICKJS_DEFAULT_THREADS : 2);
      const { createWorkerThreadExecutor } = await import("../../sandbox/hosts/worker-thread-executor.js");
      const perThread = Math.ceil(prewarm / threads);
      return {
        name,
        executor: createWorkerThreadExecutor({
          engine: name,
          threads,
          timeoutMs,
          memoryMb,
          prewarm: perThread,
          ...(isolateReuse === undefined ? {} : { isolateReuse }),
        }),
      };
    }
    if (name === "quickjs") {
      const { createQuickJsExecutor } = await import("../../sandbox/quickjs/quickjs-executor.js");
      return { name, executor: createQuickJsExecutor({ timeoutMs, memoryMb }) };
    }
    const { createIsolatedVmExecutor } = await import("../../sandbox/isolated-vm/isolated-vm-executor.js");
    return { name, executor: createIsolatedVmExecutor({ timeoutMs, memoryMb, prewarm, isolateReuse }) };
  } catch (error) {
    if (name === "quickjs") throw error;
    throw new Error(
      `the isolated-vm sandbox could not be loaded (${firstLine(errorMessage(error))}): install isolated-vm 7 on Node 24 (npm install isolated-vm), or choose executor: "quickjs"`,
    );
  }
}

const DEFAULT_PROCESSES = 2;

/**
 * Where passes run: `sandboxHost`, else `CODEMODE_SANDBOX_HOST`, else what `sandboxThreads` asked
 * for before there were sandbox processes (a number of threads, or 0 for this thread), else
 * sandbox processes.
 */
export function hostOf(settings: Pick<ExecutorSettings, "host" | "threads">): SandboxHostName {
  if (settings.host) return settings.host;
  const fromEnvironment = hostFromEnvironment();
  if (fromEnvironment) return fromEnvironment;
  if (settings.threads !== undefined) return settings.threads > 0 ? "thread" : "inline";
  return "process";
}

/**
 * Sandbox processes where they can be started; where they cannot (several in a row ended before
 * they were ready: a runtime without child processes, a missing build), sandbox threads, said
 * once. A pass that found the processes unusable never started, so it runs on the threads.
 */
async function withThreadFallback(
  processes: import("../../sandbox/hosts/shared-process-executor.js").SharedProcessExecutor,
  name: ExecutorName,
  settings: ExecutorSettings,
): Promise<Executor> {
  let threads: Executor | undefined;
  const fallBack = async (): Promise<Executor> => {
    if (threads) return threads;
    settings.logger.warn(
      `[codemode] sandbox host: worker threads of this process, because sandbox processes cannot be started here (${processes.unusable}); pass sandboxHost: "thread" to choose it and silence this`,
    );
    threads = (await build(name, "thread", settings)).executor;
    return threads;
  };
  return {
    anticipate(code) {
      (threads ?? processes).anticipate?.(code);
    },
    async runPass(request) {
      if (threads) return threads.runPass(request);
      const result = await processes.runPass(request);
      if (processes.unusable === undefined || result.status !== "failed" || result.code !== "SANDBOX_ERROR")
        return result;
      return (await fallBack()).runPass(request);
    },
    async close() {
      await Promise.all([processes.close(), threads?.close()]);
    },
  };
}

/** `CODEMODE_SANDBOX_HOST` (`process`, `thread` or `inline`), so an operator can choose without a release. */
export function hostFromEnvironment(): SandboxHostName | undefined {
  const value = process.env.CODEMODE_SANDBOX_HOST?.trim().toLowerCase();
  if (value === undefined || value === "") return undefined;
  if (value === "process" || value === "thread" || value === "inline") return value;
  throw new TypeError(`CODEMODE_SANDBOX_HOST must be process, thread or inline; got ${JSON.stringify(value)}`);
}

/**
 * `CODEMODE_EXECUTOR` (`isolated-vm` or `quickjs`): the default where the code sets no executor,
 * so an operator (and CI) can switch sandboxes without a release. Anything else is refused,
 * naming the variable.
 */
export function executorFromEnvironment(): ExecutorName | undefined {
  const value = process.env.CODEMODE_EXECUTOR?.trim().toLowerCase();
  if (value === undefined || value === "") return undefined;
  if (value === "isolated-vm" || value === "quickjs") return value;
  throw new TypeError(`CODEMODE_EXECUTOR must be isolated-vm or quickjs; got ${JSON.stringify(value)}`);
}

function firstLine(text: string): string {
  return text.split("\n", 1)[0] ?? text;
}
