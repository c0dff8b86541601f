import type { Executor } from "../executor.js";
import { EnginePasses } from "../pass/pass-lifecycle.js";
import { type PassDefaultOptions, passDefaults } from "../sandbox-config.js";
import { quickJsEngine } from "./quickjs-engine.js";
import { compiledCode } from "./quickjs-module.js";
import { createModulePool } from "./quickjs-module-pool.js";

export interface QuickJsExecutorOptions extends PassDefaultOptions {
  /**
   * Memory limit of one pass: the size its WebAssembly memory may grow to, QuickJS's own
   * structures included (at least 16 MB, the module's initial memory; at most 1 536 MB).
   * Default 128 MB.
   */
  memoryMb?: number;
  /**
   * Passes one WebAssembly module instance serves (one at a time, each in a fresh runtime and
   * context) before a new one is made; 1 makes one per pass. A module whose memory grew is never
   * used again, whatever this says. Default 50.
   */
  modulePasses?: number;
}

/** The QuickJS executor. */
export interface QuickJsExecutor extends Executor {
  /**
   * Passes running now; module instances not yet dropped (lent to a pass, or idle); modules made;
   * passes that ran in a module used before; modules dropped (used up, grown, failed, or with a
   * runtime that could not be freed); runtimes QuickJS refused to free (something of theirs was
   * still referenced: a handle the executor did not free, or a leak of QuickJS's own).
   */
  stats(): {
    passesRunning: number;
    runtimesNotFreed: number;
    modulesLive: number;
    modulesCreated: number;
    passesReused: number;
    modulesDropped: number;
  };
  /** Keeps no module instance from now on: the idle ones are dropped, the lent ones when their pass ends. */
  retire(): void;
  /** Reads and compiles QuickJS's code now, so the first pass does not (a sandbox process does it before it says it is ready). */
  warm(): Promise<void>;
}

const DEFAULT_MODULE_PASSES = 50;

/**
 * Runs each pass in a fresh QuickJS runtime and context (quickjs-ng compiled to WebAssembly), in
 * a module instance lent to that pass alone (see quickjs-module-pool.ts). Needs no native addon,
 * so it runs where isolated-vm does not load. Its code runs on this thread: a pass's synchronous
 * stretch (a loop) holds the thread until it awaits or reaches its deadline, and CPU-bound code
 * runs several times slower than in V8. Limits are enforced from the host (QuickJsWatchdog).
 *
 * @example
 * const executor = createQuickJsExecutor({ timeoutMs: 5_000 });
 * const result = await executor.runPass({
 *   code: "async () => (await math.add({ a: 1, b: 2 })).sum",
 *   connectors: { math: ["add"] },
 *   onRequest: async (request) => ({ kind: "value", value: '{"sum":3}' }),
 * });
 */
export function createQuickJsExecutor(options: QuickJsExecutorOptions = {}): QuickJsExecutor {
  const defaults = passDefaults(options);
  const modulePasses = options.modulePasses ?? DEFAULT_MODULE_PASSES;
  if (!Number.isSafeInteger(modulePasses) || modulePasses < 1)
    throw new TypeError(`modulePasses must be a whole number of at least 1; got ${String(options.modulePasses)}`);
  const pool = createModulePool(modulePasses);
  let runtimesNotFreed = 0;
  const passes = new EnginePasses(
    defaults,
    quickJsEngine(pool, () => {
      runtimesNotFreed++;
    }),
  );
  return {
    runPass: (request) => passes.run(request),
    stats: () => ({ passesRunning: passes.count, runtimesNotFreed, ...pool.stats() }),
    retire: () => pool.close(),
    warm: async () => {
      await compiledCode();
    },
    async close() {
      passes.endAll();
      pool.close();
    },
  };
}
