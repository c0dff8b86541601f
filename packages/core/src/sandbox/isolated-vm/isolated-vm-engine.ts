import type ivm from "isolated-vm";
import { errorMessage } from "../../error-message.js";
import type { PassRequest } from "../executor.js";
import type { LogCollector } from "../pass/log-collector.js";
import type { Engine, EngineSandbox, StartFailure } from "../pass/pass-lifecycle.js";
import type { PassLimitsInForce } from "../pass/pass-result.js";
import { LARGE_PROGRAM_CHARS } from "../pass/reading-gate.js";
import { IsolateBridge } from "./isolate-bridge.js";
import type { IsolatePool } from "./isolate-pool.js";
import { IsolateWatchdog } from "./isolate-watchdog.js";
import type { PreparedIsolate } from "./prepare-isolate.js";

/** How long a pass that has ended waits for deliveries still settling before it disposes their isolate. */
const DELIVERY_GRACE_MS = 20;

/** isolated-vm as an engine of the pass lifecycle (pass-lifecycle.ts): a context of its own in an isolate of the pool. */
export function isolatedVmEngine(pool: IsolatePool): Engine {
  return {
    async open(request, { limits, deadline, logs }) {
      const prepared = await pool.take(limits.memoryMb, request.partition ?? "");
      return new IsolatedVmSandbox(prepared, pool, request, limits, deadline, logs);
    },
  };
}

/**
 * One pass's context in an isolate. The program's end arrives through the `finish` callback;
 * `script.run` is awaited only for the synchronous part of the program (and the microtasks it
 * queued), so no promise of the isolate is left pending when it is disposed and the host process
 * can always exit (R-RT-5).
 */
class IsolatedVmSandbox implements EngineSandbox {
  readonly watchdog: IsolateWatchdog;
  readonly bridge: IsolateBridge;
  private script: ivm.Script | undefined;

  constructor(
    private readonly prepared: PreparedIsolate,
    private readonly pool: IsolatePool,
    private readonly request: PassRequest,
    private readonly limits: PassLimitsInForce,
    private readonly deadline: number,
    logs: LogCollector,
  ) {
    this.watchdog = new IsolateWatchdog(prepared.isolate, deadline);
    this.bridge = new IsolateBridge(prepared.isolate, request, deadline, logs, this.watchdog);
  }

  async setUp(configText: string): Promise<void> {
    const { setup } = this.prepared;
    const bridge = this.bridge;
    const args = [
      bridge.submitCallback(),
      bridge.logCallback(),
      bridge.randomBytesCallback(),
      bridge.finishCallback(),
      configText,
    ];
    const options = { result: { reference: true }, timeout: this.limits.timeoutMs } as const;
    bridge.deliver = (
      this.ownsThread() ? setup.applySync(undefined, args, options) : await setup.apply(undefined, args, options)
    ) as ivm.Reference<(id: number, kind: number, text: string) => void>;
    setup.release();
  }

  async start(body: string, lineOffset: number, compiled: () => void): Promise<StartFailure | undefined> {
    const { isolate, context } = this.prepared;
    // Alone in a sandbox process, a program of the usual size compiles on this thread, without a
    // hop to isolated-vm's thread and back (PassRequest.ownsThread); it starts there too when no
    // other pass will be sent here meanwhile (PassRequest.startInPlace).
    const here = this.ownsThread() && body.length <= LARGE_PROGRAM_CHARS;
    try {
      // `input` is undefined for a program; `codemode.run` gives a snippet's body its input.
      // `__codemode_start` returns nothing: the end comes through `finish`.
      this.script = await compileProgram(isolate, `__codemode_start(async (input) => {\n${body}\n})`, {
        filename: "codemode.js",
        lineOffset: lineOffset - 1,
        here,
      });
    } catch (error) {
      // The isolate went away while compiling (close(), the deadline): that is not the code's fault.
      const { watchdog } = this;
      if (this.bridge.ended || isolate.isDisposed || watchdog.killedBecause !== undefined || watchdog.timedOut)
        throw error;
      return { code: "SYNTAX_ERROR", message: errorMessage(error) };
    }
    try {
      const timeout = Math.max(1, this.deadline - Date.now());
      if (here && this.request.startInPlace === true) this.script.runSync(context, { timeout });
      else await this.script.run(context, { timeout });
    } finally {
      // V8 compiles the program's function when it first runs: from here, the next may read.
      compiled();
    }
    return undefined;
  }

  /** Whether the pass runs alone on this thread, which nothing else needs meanwhile (a sandbox process). */
  private ownsThread(): boolean {
    return this.request.ownsThread?.() === true;
  }

  async release(reusable: boolean): Promise<void> {
    // Handles into the isolate are released now, not when the host's GC gets to them: a warm
    // isolate keeps serving passes, and what they hold counts against its heap.
    releaseQuietly(this.prepared.setup);
    releaseQuietly(this.script);
    const bridge = this.bridge;
    // No `apply` of a delivery may be left unsettled, or a later process.exit() hangs (R-RT-5).
    // The one that ended the program settles at once; one still running code (a timer's loop)
    // is stopped by disposing the isolate first.
    if (bridge.deliveriesInFlight && !(await bridge.deliveriesSettleWithin(DELIVERY_GRACE_MS))) {
      this.pool.release(this.prepared, false);
      await bridge.settleDeliveries();
      return;
    }
    // Disposed (or, warm, returned to the pool) before the pass answers, on every path.
    // Deferring it (to a setImmediate) let a busy loop, which never reaches its check phase,
    // keep thousands of dead isolates (R-SB-3).
    this.pool.release(this.prepared, reusable);
  }
}

/**
 * Compiles a program: on this thread when `here`, else on isolated-vm's. This thread's stack may
 * be shallower than isolated-vm's threads' (V8's default on a process's main thread, about 1 MB):
 * a program whose compilation needs more (a long run of declarations, deep nesting) is compiled
 * there after all, so that where a pass runs never decides whether its program compiles.
 */
export async function compileProgram(
  isolate: ivm.Isolate,
  source: string,
  options: { filename: string; lineOffset: number; here: boolean },
): Promise<ivm.Script> {
  const { here, ...origin } = options;
  if (here) {
    try {
      return isolate.compileScriptSync(source, origin);
    } catch (error) {
      if (!isStackOverflow(error)) throw error;
    }
  }
  return await isolate.compileScript(source, origin);
}

function isStackOverflow(error: unknown): boolean {
  return error instanceof RangeError || /Maximum call stack size exceeded/.test(errorMessage(error));
}

/** Releases a handle into an isolate unless it is gone already (released, or its isolate disposed). */
function releaseQuietly(handle: { release(): void } | undefined): void {
  try {
    handle?.release();
  } catch {
    // Already released, or its isolate is gone.
  }
}
