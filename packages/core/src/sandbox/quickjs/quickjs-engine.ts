import type { PassRequest, PassResult } from "../executor.js";
import type { Engine, EngineSandbox, StartFailure } from "../pass/pass-lifecycle.js";
import { failed } from "../pass/pass-result.js";
import type { ReadPass } from "../pass/read-program.js";
import { QuickJsBridge } from "./quickjs-bridge.js";
import type { ModulePool, PooledModule } from "./quickjs-module-pool.js";
import { QuickJsSandbox } from "./quickjs-sandbox.js";
import { QuickJsWatchdog } from "./quickjs-watchdog.js";

/** The largest memory limit a QuickJS pass gets, whatever `memoryMb` asks (docs/security.md). */
export const MAX_MEMORY_MB = 1_536;

/** The message QuickJS gives when an allocation failed. */
const OUT_OF_MEMORY = "InternalError: out of memory";

/**
 * QuickJS as an engine of the pass lifecycle (pass-lifecycle.ts): a fresh runtime and context
 * in a module instance lent to the pass alone. `notFreed` counts a runtime QuickJS refused to
 * free (it asserts when something of it is still referenced).
 */
export function quickJsEngine(pool: ModulePool, notFreed: () => void): Engine {
  return {
    async open(request, pass) {
      // A wasm32 module addresses 2 GB: beyond this limit there would be no room left above it for
      // the watchdog to see a program go over it.
      const limitBytes = Math.min(pass.limits.memoryMb, MAX_MEMORY_MB) * 1024 * 1024;
      const pooled = await pool.take(limitBytes, request.partition ?? "");
      const watchdog = new QuickJsWatchdog(pooled.module.memory, pooled.limitBytes, pass.deadline, request.aborted);
      try {
        return new QuickJsEngineSandbox(pooled, pool, watchdog, request, pass, notFreed);
      } catch (error) {
        watchdog.stop();
        pool.release(pooled, false);
        throw error;
      }
    },
  };
}

class QuickJsEngineSandbox implements EngineSandbox {
  readonly bridge: QuickJsBridge;
  private readonly sandbox: QuickJsSandbox;

  constructor(
    private readonly pooled: PooledModule,
    private readonly pool: ModulePool,
    readonly watchdog: QuickJsWatchdog,
    request: PassRequest,
    { deadline, logs, normalized }: ReadPass,
    private readonly notFreed: () => void,
  ) {
    this.sandbox = new QuickJsSandbox(pooled.module, watchdog, pooled.limitBytes);
    // The script's line 2 is the body's line 1 (see programScript).
    this.bridge = new QuickJsBridge(this.sandbox, request, deadline, logs, normalized.lineOffset - 1);
  }

  async setUp(configText: string): Promise<void> {
    const setUp = this.sandbox.adaptGlobals()
      ? this.bridge.setUp(configText)
      : "the sandbox's globals could not be prepared";
    if (setUp !== undefined)
      throw new Error(this.watchdog.brokenBecause ?? `the sandbox could not be set up: ${setUp}`);
  }

  async start(body: string, _lineOffset: number, compiled: () => void): Promise<StartFailure | undefined> {
    // The turn ends once QuickJS has compiled the program, before any of it runs: a program that
    // holds its thread until the thread is ended must not keep other large programs waiting.
    // `__codemode_start` returns nothing: the end comes through `finish`.
    const failure = this.sandbox.startProgram(programScript(body), "codemode.js", compiled);
    compiled();
    if (this.watchdog.stopping)
      throw new Error(this.watchdog.brokenBecause ?? "the sandbox ended while the program started");
    // Only compiling can fail here: the program itself runs inside `__codemode_start`, which reports what it throws.
    if (failure)
      return {
        code: failure.name === "SyntaxError" ? "SYNTAX_ERROR" : "SANDBOX_ERROR",
        message: `${failure.name}: ${failure.message}`,
      };
    return undefined;
  }

  afterEnd(): void {
    // A program that caught "out of memory" may have returned since: the memory is read once more.
    this.sandbox.checkMemory();
  }

  interpret(result: PassResult, { limits, logs }: ReadPass): PassResult {
    // An allocation QuickJS could not make, not caught: the memory limit, as isolated-vm reports it.
    if (
      result.status === "failed" &&
      (result.code === "PROGRAM_ERROR" || result.code === "SANDBOX_ERROR") &&
      result.error.startsWith(OUT_OF_MEMORY)
    )
      return failed("MEMORY_LIMIT", `the program used more memory than the ${limits.memoryMb} MB limit`, logs);
    return result;
  }

  async release(reusable: boolean): Promise<void> {
    // Freed before the pass answers, on every path; a module whose runtime could not be freed
    // (or that failed while it ran code) is dropped, never used again.
    const intact = this.sandbox.intact;
    const freed = this.sandbox.dispose();
    if (intact && !freed) this.notFreed();
    this.pool.release(this.pooled, freed && reusable);
  }
}

/** The script QuickJS runs: the body in the async function `__codemode_start` runs, from line 2. */
function programScript(body: string): string {
  // `input` is undefined for a program; `codemode.run` gives a snippet's body its input.
  return `(async (input) => {\n${body}\n})`;
}
