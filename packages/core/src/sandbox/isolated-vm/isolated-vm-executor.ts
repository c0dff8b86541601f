import type { Executor } from "../executor.js";
import { EnginePasses } from "../pass/pass-lifecycle.js";
import { type PassDefaultOptions, passDefaults } from "../sandbox-config.js";
import { createIsolatePool } from "./isolate-pool.js";
import { type IsolateReuse, isolateReuseFromEnvironment, isolateReuseSettings } from "./isolate-reuse.js";
import { isolatedVmEngine } from "./isolated-vm-engine.js";

export interface IsolatedVmExecutorOptions extends PassDefaultOptions {
  /** Heap limit of one pass's isolate. Default 128 MB. */
  memoryMb?: number;
  /**
   * Fresh isolates kept ready ahead of need (context created, prelude compiled and run), so a
   * pass that finds no warm isolate skips that work. Default 0.
   */
  prewarm?: number;
  /**
   * Warm isolates: each pass gets a fresh context of its own (its own globals and built-ins) in
   * an isolate that no other pass uses at that moment, instead of a fresh isolate. An isolate
   * serves passes of one runtime (`PassRequest.partition`) only, and is disposed after
   * `maxPasses` or `maxAgeMs`, after any pass that hit a limit or left code running, and when its
   * heap after a pass is above `maxHeapShare` of its limit. `true` takes the defaults; `false`
   * gives every pass a fresh isolate. Default on (`CODEMODE_ISOLATE_REUSE=0` in the environment
   * turns it off where the code sets nothing). See docs/security.md for what a shared isolate
   * does not hide.
   */
  isolateReuse?: IsolateReuse | boolean;
  /**
   * With warm isolates, prepare each one's next context while the process is idle (default
   * true). The sandbox threads of `createWorkerThreadExecutor` prepare it when the next pass
   * comes instead: a thread must not be inside an isolate's work when the process exits.
   */
  prepareContextsAhead?: boolean;
}

export { DEFAULT_TIMEOUT_MS } from "../sandbox-config.js";

/** The isolated-vm executor; `warm()` resolves once the prewarmed isolates are ready. */
export interface IsolatedVmExecutor extends Executor {
  warm(): Promise<void>;
  /**
   * Passes running now; isolates not yet disposed (running a pass, prewarmed, or warm and idle:
   * each pass disposes its isolate or keeps it warm before it answers, so the second exceeds the
   * first by `prewarm` and the idle warm ones at most); and passes that ran in a warm isolate.
   */
  stats(): { passesRunning: number; isolatesLive: number; passesReused: number };
  /** Keeps no isolate warm from now on: the idle ones are disposed, the running ones when their pass ends. */
  retire(): void;
}

/**
 * Runs each pass in a fresh isolated-vm context of its own, in a warm isolate that serves one
 * pass at a time (or, with `isolateReuse: false`, in a fresh isolate): nothing of one pass is
 * reachable from the next (docs/security.md).
 *
 * @example
 * const executor = createIsolatedVmExecutor({ timeoutMs: 5_000 });
 * const result = await executor.runPass({
 *   code: "async () => (await math.add({ a: 1, b: 2 })).sum",
 *   connectors: { math: ["add"] },
 *   onRequest: async (request) => ({ kind: "value", value: '{"sum":3}' }),
 * });
 */
export function createIsolatedVmExecutor(options: IsolatedVmExecutorOptions = {}): IsolatedVmExecutor {
  const defaults = passDefaults(options);
  const pool = createIsolatePool(
    Math.max(0, Math.floor(options.prewarm ?? 0)),
    defaults.memoryMb,
    isolateReuseSettings(options.isolateReuse ?? isolateReuseFromEnvironment() ?? true),
    options.prepareContextsAhead ?? true,
  );
  const passes = new EnginePasses(defaults, isolatedVmEngine(pool));
  return {
    async runPass(request) {
      try {
        return await passes.run(request);
      } finally {
        // Prepare the next isolate once this pass has answered, not while it runs.
        pool.refillSoon();
      }
    },
    warm: () => pool.warm(),
    stats: () => ({ passesRunning: passes.count, isolatesLive: pool.live, passesReused: pool.reused }),
    retire: () => pool.retire(),
    async close() {
      passes.endAll();
      await pool.close();
    },
  };
}
