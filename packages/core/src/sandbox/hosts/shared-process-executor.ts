import type { Executor, PassRequest, PassResult } from "../executor.js";
import { createProcessExecutor, type ProcessExecutor, type ProcessExecutorOptions } from "./process-host.js";

/** How long sandbox processes nobody uses are kept, for the next runtime of the same settings. */
const LINGER_MS = 5_000;

interface Shared {
  executor: ProcessExecutor;
  users: number;
  linger: NodeJS.Timeout | undefined;
}

/** Process executors of this process, by their settings. */
const shared = new Map<string, Shared>();

/** A runtime's handle on sandbox processes it shares. */
export interface SharedProcessExecutor extends Executor {
  /** Why the processes cannot be used (they could not be started), or undefined. */
  readonly unusable: string | undefined;
  warm(): Promise<void>;
}

/**
 * The sandbox processes for the runtimes of this process that run passes with the same settings:
 * a server that makes a runtime per tenant or per request starts `processes` children once, not
 * per runtime. Limits travel with each pass (its request's `timeoutMs`, `memoryMb`), warm
 * isolates serve one runtime each (`PassRequest.partition`), and a pass that merely shared a
 * process that crashed runs again (`SandboxCrash.retry`). `close()` ends this runtime's passes;
 * the processes end `LINGER_MS` after the last runtime using them closed (they never keep the
 * process alive meanwhile).
 */
export function sharedProcessExecutor(options: ProcessExecutorOptions): SharedProcessExecutor {
  const key = JSON.stringify(Object.entries(options).sort(([a], [b]) => a.localeCompare(b)));
  let entry = shared.get(key);
  if (!entry) {
    entry = { executor: createProcessExecutor(options), users: 0, linger: undefined };
    shared.set(key, entry);
  }
  const mine = entry;
  mine.users++;
  clearTimeout(mine.linger);
  mine.linger = undefined;
  /** This runtime's passes running now: its `close()` ends them, and only them. */
  const running = new Set<AbortController>();
  let closed = false;
  return {
    get unusable() {
      return mine.executor.unusable;
    },
    warm: () => mine.executor.warm(),
    anticipate(code: string): void {
      if (!closed) mine.executor.anticipate(code);
    },
    async runPass(request: PassRequest): Promise<PassResult> {
      if (closed) return { status: "failed", code: "SANDBOX_ERROR", error: "the executor was closed", logs: [] };
      const ending = new AbortController();
      running.add(ending);
      const signal = request.signal ? AbortSignal.any([request.signal, ending.signal]) : ending.signal;
      try {
        return await mine.executor.runPass({ ...request, signal });
      } finally {
        running.delete(ending);
      }
    },
    async close() {
      if (closed) return;
      closed = true;
      for (const ending of running) ending.abort("the executor was closed while the pass ran");
      if (--mine.users > 0) return;
      mine.linger = setTimeout(() => {
        if (mine.users > 0) return;
        if (shared.get(key) === mine) shared.delete(key);
        void mine.executor.close();
      }, LINGER_MS);
      mine.linger.unref();
    },
  };
}
