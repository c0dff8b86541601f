import type ivm from "isolated-vm";
import { errorMessage } from "../error-message.js";
import { abortReason } from "./abort-reason.js";
import { nextTurn } from "./event-loop-turn.js";
import type { Executor, PassRequest, PassResult } from "./executor.js";
import { createIsolatePool, type IsolatePool } from "./isolate-pool.js";
import { type IsolateReuse, isolateReuseSettings } from "./isolate-reuse.js";
import { PassBridge } from "./pass-bridge.js";
import { classifyFailure, failed, finishPass, interpretResult } from "./pass-result.js";
import { PassWatchdog } from "./pass-watchdog.js";
import type { PreparedIsolate } from "./prepare-isolate.js";
import { type ReadPass, readProgram } from "./read-program.js";
import { type PassDefaultOptions, type PassDefaults, passDefaults, sandboxConfigText } from "./sandbox-config.js";

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

export { DEFAULT_TIMEOUT_MS } from "./sandbox-config.js";

/** How long a pass that has ended waits for deliveries still settling before it disposes their isolate. */
const DELIVERY_GRACE_MS = 20;

/** The isolated-vm executor; `warm()` resolves once the prewarmed isolates are ready. */
export interface IsolatedVmExecutor extends Executor {
  warm(): Promise<void>;
  /**
   * Passes running now; isolates not yet disposed (running a pass, prewarmed, or warm and idle:
   * each pass disposes its isolate or keeps it warm before it answers, so the second exceeds the
   * first by `prewarm` and the idle warm ones at most); and passes that ran in a warm isolate.
   */
  stats(): { passesRunning: number; isolatesLive: number; passesReused: number };
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
  /** The watchdogs of passes running now: `close()` ends them instead of leaving them waiting. */
  const running = new Set<PassWatchdog>();
  let passesRunning = 0;
  return {
    async runPass(request) {
      passesRunning++;
      try {
        return await runPass(request, defaults, pool, running);
      } finally {
        passesRunning--;
        // Prepare the next isolate once this pass has answered, not while it runs.
        pool.refillSoon();
      }
    },
    warm: () => pool.warm(),
    stats: () => ({ passesRunning, isolatesLive: pool.live, passesReused: pool.reused }),
    async close() {
      for (const watchdog of running) watchdog.kill("the executor was closed while the pass ran");
      await pool.close();
    },
  };
}

/**
 * One pass: normalize the code, take an isolate, install the globals (setup), compile and run the
 * program, and turn how it ended into a result. The isolate is disposed right after answering.
 *
 * The program's end arrives through the `finish` callback; `script.run` is awaited only for the
 * synchronous part of the program (and the microtasks it queued). No promise of the isolate is
 * left pending when it is disposed, so the host process can always exit (R-RT-5).
 */
async function runPass(
  request: PassRequest,
  defaults: PassDefaults,
  pool: IsolatePool,
  running: Set<PassWatchdog>,
): Promise<PassResult> {
  // The turn to read a large program lasts until V8 has compiled it in the isolate too.
  return readProgram(request, defaults, (pass) => runInIsolate(request, pass, defaults, pool, running));
}

/** The pass once its program is read: `endTurn` is called as soon as V8 has compiled it. */
async function runInIsolate(
  request: PassRequest,
  { limits, deadline, logs, normalized, endTurn }: ReadPass,
  defaults: PassDefaults,
  pool: IsolatePool,
  running: Set<PassWatchdog>,
): Promise<PassResult> {
  let prepared: PreparedIsolate;
  try {
    // A pass often starts from a completion of another pass's isolate: its own isolate work
    // starts from the loop's next check phase, so that passes cannot starve the loop's timers.
    await nextTurn();
    prepared = await pool.take(limits.memoryMb, request.partition ?? "");
  } catch (error) {
    return failed("SANDBOX_ERROR", `the sandbox could not be created: ${errorMessage(error)}`, logs);
  }
  const { isolate, context, setup } = prepared;
  /** Whether the isolate may serve another pass (with isolateReuse): set once the pass ended normally. */
  let reusable = false;
  const watchdog = new PassWatchdog(isolate, deadline);
  running.add(watchdog);
  const stopOnAbort = () => watchdog.kill(abortReason(request.signal));
  if (request.signal?.aborted) stopOnAbort();
  request.signal?.addEventListener("abort", stopOnAbort, { once: true });
  const bridge = new PassBridge(isolate, request, deadline, logs, watchdog);
  let script: ivm.Script | undefined;
  try {
    bridge.deliver = (await setup.apply(
      undefined,
      [
        bridge.submitCallback(),
        bridge.logCallback(),
        bridge.randomBytesCallback(),
        bridge.finishCallback(),
        sandboxConfigText(request, defaults),
      ],
      { result: { reference: true }, timeout: limits.timeoutMs },
    )) as ivm.Reference<(id: number, kind: number, text: string) => void>;
    setup.release();

    try {
      // `input` is undefined for a program; `codemode.run` gives a snippet's body its input.
      // `__codemode_start` returns nothing: the end comes through `finish`.
      script = await isolate.compileScript(`__codemode_start(async (input) => {\n${normalized.body}\n})`, {
        filename: "codemode.js",
        lineOffset: normalized.lineOffset - 1,
      });
    } catch (error) {
      // The isolate went away while compiling (close(), the deadline): that is not the code's fault.
      if (bridge.ended || isolate.isDisposed || watchdog.killedBecause !== undefined || watchdog.timedOut) throw error;
      return failed("SYNTAX_ERROR", errorMessage(error), logs);
    }
    try {
      await script.run(context, { timeout: Math.max(1, deadline - Date.now()) });
    } finally {
      // V8 compiles the program's function when it first runs: from here, the next may read.
      endTurn();
    }
    bridge.programStarted();
    const end = await bridge.ending(watchdog.dead);
    if (end === "dead") throw new Error("the isolate ended while the program ran");
    const result =
      end === "halted"
        ? await finishPass({ status: "halted", logs: logs.lines }, bridge, limits, logs)
        : await finishPass(interpretResult(end.text, logs, defaults.maxMessageChars), bridge, limits, logs);
    reusable = endedNormally(result, watchdog);
    return result;
  } catch (error) {
    await bridge.settleDeliveries();
    return await finishPass(classifyFailure(error, watchdog, bridge, limits, logs), bridge, limits, logs);
  } finally {
    request.signal?.removeEventListener("abort", stopOnAbort);
    running.delete(watchdog);
    watchdog.stop();
    bridge.end();
    // Handles into the isolate are released now, not when the host's GC gets to them: a warm
    // isolate keeps serving passes, and what they hold counts against its heap.
    releaseQuietly(setup);
    releaseQuietly(script);
    // No `apply` of a delivery may be left unsettled, or a later process.exit() hangs (R-RT-5).
    // The one that ended the program settles at once; one still running code (a timer's loop)
    // is stopped by disposing the isolate first.
    if (bridge.deliveriesInFlight && !(await bridge.deliveriesSettleWithin(DELIVERY_GRACE_MS))) {
      pool.release(prepared, false);
      await bridge.settleDeliveries();
    } else {
      // Disposed (or, warm, returned to the pool) before the pass answers, on every path.
      // Deferring it (to a setImmediate) let a busy loop, which never reaches its check phase,
      // keep thousands of dead isolates (R-SB-3).
      pool.release(prepared, reusable);
    }
  }
}

/** Releases a handle into an isolate unless it is gone already (released, or its isolate disposed). */
function releaseQuietly(handle: { release(): void } | undefined): void {
  try {
    handle?.release();
  } catch {
    // Already released, or its isolate is gone.
  }
}

/**
 * `CODEMODE_ISOLATE_REUSE` (`1`/`on`/`true`, or `0`/`off`/`false`): the default of `isolateReuse`
 * where the code sets none, so an operator can turn warm isolates on or off without a release
 * (and CI runs every suite both ways). Anything else is refused, naming the variable.
 */
function isolateReuseFromEnvironment(): boolean | undefined {
  const value = process.env.CODEMODE_ISOLATE_REUSE?.trim().toLowerCase();
  if (value === undefined || value === "") return undefined;
  if (["1", "on", "true"].includes(value)) return true;
  if (["0", "off", "false"].includes(value)) return false;
  throw new TypeError(`CODEMODE_ISOLATE_REUSE must be 1, on, true, 0, off or false; got ${JSON.stringify(value)}`);
}

/**
 * A pass whose isolate may serve another: it ended by returning, by throwing, or by a host halt,
 * with no limit hit and the isolate alive. A timeout, the heap limit, a crash or a kill disposes it.
 */
function endedNormally(result: PassResult, watchdog: PassWatchdog): boolean {
  if (watchdog.timedOut || watchdog.outOfMemory || watchdog.killedBecause !== undefined) return false;
  if (result.status !== "failed") return true;
  return result.code === "SANDBOX_ERROR" || result.code === "NOT_SERIALIZABLE";
}
