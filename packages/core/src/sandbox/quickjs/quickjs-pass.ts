import { errorMessage } from "../../error-message.js";
import { abortReason } from "../abort-reason.js";
import { nextTurn } from "../event-loop-turn.js";
import type { PassRequest, PassResult } from "../executor.js";
import { classifyFailure, failed, finishPass, interpretResult } from "../pass-result.js";
import { type ReadPass, readProgram } from "../read-program.js";
import { type PassDefaults, sandboxConfigText } from "../sandbox-config.js";
import { QuickJsBridge } from "./quickjs-bridge.js";
import type { ModulePool, PooledModule } from "./quickjs-module-pool.js";
import { QuickJsSandbox } from "./quickjs-sandbox.js";
import { QuickJsWatchdog } from "./quickjs-watchdog.js";

/** What a pass needs of its executor. */
export interface PassContext {
  defaults: PassDefaults;
  pool: ModulePool;
  /** The watchdogs of passes running now: `close()` ends them. */
  running: Set<QuickJsWatchdog>;
  /** Counts a runtime QuickJS refused to free (it asserts when something of it is still referenced). */
  notFreed(): void;
}

/** The message QuickJS gives when an allocation failed. */
const OUT_OF_MEMORY = "InternalError: out of memory";

/**
 * One pass in QuickJS: normalize the code, take a module, make a fresh runtime and context in it,
 * run the prelude and the program, and turn how it ended into a result. As with isolated-vm, the
 * program's end arrives through the `finish` host function; the runtime is freed before the pass
 * answers, on every path.
 */
export async function runQuickJsPass(request: PassRequest, executor: PassContext): Promise<PassResult> {
  // The turn to read a large program lasts until QuickJS has compiled it (see runProgram).
  return readProgram(request, executor.defaults, (pass) => runInModule(request, pass, executor));
}

/** The pass once its code is read: a module is taken, used and given back (or dropped). */
async function runInModule(request: PassRequest, state: ReadPass, executor: PassContext): Promise<PassResult> {
  const { limits, deadline, logs, normalized } = state;
  // A wasm32 module addresses 2 GB: beyond this limit there would be no room left above it for
  // the watchdog to see a program go over it.
  const limitBytes = Math.min(limits.memoryMb, MAX_MEMORY_MB) * 1024 * 1024;
  let pooled: PooledModule;
  try {
    // A pass often starts from a completion of another pass: its sandbox work starts from the
    // loop's next check phase, so that passes cannot starve the loop's timers (event-loop-turn.ts).
    await nextTurn();
    pooled = await executor.pool.take(limitBytes, request.partition ?? "");
  } catch (error) {
    return failed("SANDBOX_ERROR", `the sandbox could not be created: ${errorMessage(error)}`, logs);
  }
  const watchdog = new QuickJsWatchdog(pooled.module.memory, pooled.limitBytes, deadline, request.aborted);
  executor.running.add(watchdog);
  const stopOnAbort = () => watchdog.kill(abortReason(request.signal));
  if (request.signal?.aborted) stopOnAbort();
  request.signal?.addEventListener("abort", stopOnAbort, { once: true });
  let sandbox: QuickJsSandbox | undefined;
  let bridge: QuickJsBridge | undefined;
  let result: PassResult | undefined;
  try {
    sandbox = new QuickJsSandbox(pooled.module, watchdog, pooled.limitBytes);
    // The script's line 2 is the body's line 1 (see programScript).
    bridge = new QuickJsBridge(sandbox, request, deadline, logs, normalized.lineOffset - 1);
    result = await runProgram(sandbox, bridge, watchdog, request, state, executor.defaults);
    return result;
  } catch (error) {
    if (!bridge) return failed("SANDBOX_ERROR", `the sandbox could not be created: ${errorMessage(error)}`, logs);
    return await finishPass(classifyFailure(error, watchdog, bridge, limits, logs), bridge, limits, logs);
  } finally {
    request.signal?.removeEventListener("abort", stopOnAbort);
    executor.running.delete(watchdog);
    watchdog.stop();
    bridge?.end();
    // Freed before the pass answers, on every path; a module whose runtime could not be freed
    // (or that failed while it ran code) is dropped, never used again.
    const intact = sandbox?.intact ?? false;
    const freed = sandbox?.dispose() ?? false;
    if (intact && !freed) executor.notFreed();
    executor.pool.release(pooled, freed && result !== undefined && endedNormally(result, watchdog));
  }
}

/**
 * Sets the sandbox up, runs the program's synchronous part and waits for how it ends: its end
 * text, a halt, a stall (only requests waiting for a person are left), or the watchdog.
 * Throws when the watchdog ended the pass (classifyFailure says how).
 */
async function runProgram(
  sandbox: QuickJsSandbox,
  bridge: QuickJsBridge,
  watchdog: QuickJsWatchdog,
  request: PassRequest,
  state: ReadPass,
  defaults: PassDefaults,
): Promise<PassResult> {
  const { limits, logs, normalized } = state;
  // Aborted, or the executor closed, while the module was being made.
  if (watchdog.stopping) throw new Error("the pass ended before its sandbox was set up");
  const setUp = sandbox.adaptGlobals()
    ? bridge.setUp(sandboxConfigText(request, defaults))
    : "the sandbox's globals could not be prepared";
  if (setUp !== undefined) throw new Error(watchdog.brokenBecause ?? `the sandbox could not be set up: ${setUp}`);

  // The turn ends once QuickJS has compiled the program, before any of it runs: a program that
  // holds its thread until the thread is ended must not keep other large programs waiting.
  // `__codemode_start` returns nothing: the end comes through `finish`.
  const compiled = sandbox.startProgram(programScript(normalized.body), "codemode.js", state.endTurn);
  state.endTurn();
  if (watchdog.stopping) throw new Error(watchdog.brokenBecause ?? "the sandbox ended while the program started");
  if (compiled) {
    // Only compiling can fail here: the program itself runs inside `__codemode_start`, which reports what it throws.
    const code = compiled.name === "SyntaxError" ? "SYNTAX_ERROR" : "SANDBOX_ERROR";
    return failed(code, `${compiled.name}: ${compiled.message}`, logs);
  }
  bridge.programStarted();
  const end = await bridge.ending(watchdog.dead);
  // The memory is checked once more: a program that caught "out of memory" may have returned since.
  sandbox.checkMemory();
  if (end === "dead" || watchdog.outOfMemory || watchdog.brokenBecause !== undefined)
    throw new Error(watchdog.brokenBecause ?? "the sandbox ended while the program ran");
  if (end === "halted") return await finishPass({ status: "halted", logs: logs.lines }, bridge, limits, logs);
  const result = interpretResult(end.text, logs, defaults.maxMessageChars);
  // An allocation QuickJS could not make, not caught: the memory limit, as isolated-vm reports it.
  if (result.status === "failed" && result.code === "SANDBOX_ERROR" && result.error.startsWith(OUT_OF_MEMORY)) {
    return await finishPass(
      failed("MEMORY_LIMIT", `the program used more memory than the ${limits.memoryMb} MB limit`, logs),
      bridge,
      limits,
      logs,
    );
  }
  return await finishPass(result, bridge, limits, logs);
}

/** The script QuickJS runs: the body in the async function `__codemode_start` runs, from line 2. */
/** The largest memory limit a QuickJS pass gets, whatever `memoryMb` asks (docs/security.md). */
export const MAX_MEMORY_MB = 1_536;

function programScript(body: string): string {
  // `input` is undefined for a program; `codemode.run` gives a snippet's body its input.
  return `(async (input) => {\n${body}\n})`;
}

/**
 * A pass whose module may serve another: it ended by returning, by throwing, or by a host halt,
 * with no limit hit. A timeout, the memory limit, a failure of the module or a kill drops it.
 */
function endedNormally(result: PassResult, watchdog: QuickJsWatchdog): boolean {
  if (watchdog.stopping) return false;
  if (result.status !== "failed") return true;
  return result.code === "SANDBOX_ERROR" || result.code === "NOT_SERIALIZABLE" || result.code === "SYNTAX_ERROR";
}
