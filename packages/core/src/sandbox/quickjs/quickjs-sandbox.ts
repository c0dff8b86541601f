import type { QuickJSContext, QuickJSHandle, QuickJSRuntime } from "quickjs-emscripten-core";
import { adaptQuickJsGlobals } from "./quickjs-globals.js";
import type { QuickJsModule } from "./quickjs-module.js";
import type { QuickJsWatchdog } from "./quickjs-watchdog.js";

/**
 * Stack QuickJS may use (`setMaxStackSize`), measured in the module's own stack. Its frames also
 * take the host's native stack, at a ratio that depends on the C function (the parser's are
 * large): at 256 KB a plain recursion ends cleanly at about 1,500 calls with QuickJS's own
 * RangeError, while some deep recursions (JSON.parse of 100,000 nested brackets) overflow the
 * host's stack first. That is caught too (QuickJsSandbox.run): the pass fails with the same
 * RangeError and its module is dropped.
 */
const MAX_STACK_BYTES = 256 * 1024;

/** Room kept beyond a string's UTF-8 size when it is copied in (a page for the allocator's own needs). */
const COPY_SLACK_BYTES = 65_536;

/** How an evaluation or a call failed, as the program would describe the error. */
export interface SandboxFailure {
  name: string;
  message: string;
}

/**
 * One pass's QuickJS runtime and context in a module of its own, and the one way into them:
 * `run`, which runs the jobs the call queued, turns a failure of the module itself into an end of
 * the pass, and checks the memory after. Every handle is freed by whoever made it; `dispose`
 * frees the runtime, which asserts that none is left.
 */
export class QuickJsSandbox {
  private readonly runtime: QuickJSRuntime;
  private readonly context: QuickJSContext;

  constructor(
    private readonly module: QuickJsModule,
    private readonly watchdog: QuickJsWatchdog,
    limitBytes: number,
  ) {
    this.runtime = module.quickjs.newRuntime();
    try {
      // Counted by QuickJS per allocation, not per byte, in this build (it cannot read the size
      // of a block): a bound on allocations only. The watchdog bounds the bytes.
      this.runtime.setMemoryLimit(limitBytes);
      this.runtime.setMaxStackSize(MAX_STACK_BYTES);
      this.runtime.setInterruptHandler(watchdog.shouldInterrupt);
      this.context = this.runtime.newContext();
    } catch (error) {
      this.runtime.dispose();
      throw error;
    }
  }

  /** True while code of the pass may run. */
  get running(): boolean {
    return !this.watchdog.stopping;
  }

  /** False once the module failed: its handles must not be touched any more. */
  get intact(): boolean {
    return this.watchdog.brokenBecause === undefined;
  }

  /** Ends the pass if its memory is over the limit (see QuickJsWatchdog.checkMemory). */
  checkMemory(): void {
    this.watchdog.checkMemory();
  }

  /** Makes the globals those of an isolated-vm context (see adaptQuickJsGlobals); false if that failed. */
  adaptGlobals(): boolean {
    return this.evaluate(`(${adaptQuickJsGlobals.toString()})()`, "setup.js") === undefined && this.running;
  }

  /**
   * Runs `work` (calls into QuickJS), then every job it queued (promise reactions), unless the
   * pass must end. False when the module itself threw on the host's side (the host's stack
   * overflowed inside it, an assertion aborted it): the watchdog ends the pass. Never throws.
   */
  run(work: (context: QuickJSContext) => void): boolean {
    if (!this.intact) return false;
    try {
      work(this.context);
      this.pump();
      return true;
    } catch (error) {
      this.watchdog.broke(error);
      return false;
    } finally {
      this.watchdog.checkMemory();
    }
  }

  /**
   * A string copied into the sandbox, or undefined (the pass then ends with MEMORY_LIMIT) when
   * the memory could not take it: the copy goes through a block of the module's allocator, and
   * quickjs-emscripten writes to it without checking that the allocation succeeded.
   */
  newString(text: string): QuickJSHandle | undefined {
    if (!this.fits(text)) {
      this.watchdog.exceedMemory();
      return undefined;
    }
    return this.context.newString(text);
  }

  /** Evaluates script text; a failure is described, undefined when it ran. */
  evaluate(code: string, filename: string): SandboxFailure | undefined {
    return this.evaluateThen(code, filename, () => undefined);
  }

  /**
   * Compiles the program as a function (its body does not run yet), calls `compiled`, then hands
   * the function to the prelude's `__codemode_start`, which runs it. A failure to compile is
   * described; what the program throws is the prelude's to report.
   */
  startProgram(code: string, filename: string, compiled: () => void): SandboxFailure | undefined {
    return this.evaluateThen(code, filename, (main, context) => {
      compiled();
      const start = context.getProp(context.global, "__codemode_start");
      try {
        const call = context.callFunction(start, context.undefined, main);
        if (!call.error) {
          call.value.dispose();
          return undefined;
        }
        try {
          return this.describe(call.error);
        } finally {
          call.error.dispose();
        }
      } finally {
        start.dispose();
      }
    });
  }

  /**
   * Evaluates script text, then hands its value to `then` (which must not keep it: it is freed
   * after); the failure of either is described, undefined when both ran.
   */
  private evaluateThen(
    code: string,
    filename: string,
    then: (value: QuickJSHandle, context: QuickJSContext) => SandboxFailure | undefined,
  ): SandboxFailure | undefined {
    if (!this.fits(code)) {
      this.watchdog.exceedMemory();
      return { name: "RangeError", message: "the program does not fit in the sandbox's memory" };
    }
    let failure: SandboxFailure | undefined;
    this.run((context) => {
      const result = context.evalCode(code, filename, { type: "global" });
      if (result.error) {
        try {
          failure = this.describe(result.error);
        } finally {
          result.error.dispose();
        }
        return;
      }
      try {
        failure = then(result.value, context);
      } finally {
        result.value.dispose();
      }
    });
    return failure;
  }

  /** An error's name and message, read as properties: a getter the program put there runs under the watchdog. */
  describe(error: QuickJSHandle): SandboxFailure {
    const context = this.context;
    if (context.typeof(error) !== "object") return { name: "Error", message: "the sandbox threw a non-error" };
    const read = (key: string, fallback: string): string => {
      const handle = context.getProp(error, key);
      try {
        return context.typeof(handle) === "string" ? context.getString(handle) : fallback;
      } finally {
        handle.dispose();
      }
    };
    return { name: read("name", "Error"), message: read("message", "") };
  }

  /** Frees the context and the runtime; false when that failed or was not tried (the module is not used again). */
  dispose(): boolean {
    if (!this.intact) return false;
    try {
      this.context.dispose();
      this.runtime.dispose();
      return true;
    } catch {
      return false;
    }
  }

  private fits(text: string): boolean {
    // A twentieth of the maximum is kept back: the allocator's growth asks for more than it needs.
    const room = this.module.maximumBytes * 0.95 - this.module.memory.buffer.byteLength;
    return Buffer.byteLength(text, "utf8") + COPY_SLACK_BYTES <= room;
  }

  /** Runs queued jobs until none is left or the pass must end. */
  private pump(): void {
    while (this.running && this.runtime.hasPendingJob()) {
      const result = this.runtime.executePendingJobs();
      // A job ends with an error only when no program could catch it (the interrupt, an
      // allocation that failed inside the engine): the watchdog knows why, or the next job runs.
      if (result.error) result.error.dispose();
    }
  }
}
