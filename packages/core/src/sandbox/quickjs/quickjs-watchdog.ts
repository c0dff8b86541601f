import { errorMessage } from "../../error-message.js";
import type { PassEndings } from "../pass/pass-result.js";

/**
 * The limits of one QuickJS pass: its deadline, its memory, and the host's reasons to stop it.
 * QuickJS runs on this thread, so nothing can stop it from outside while it runs: the runtime's
 * interrupt handler (`shouldInterrupt`, polled by the interpreter) ends running code at the
 * deadline or past the memory limit, and a host timer ends a pass that waits on the host.
 * Whatever the reason, `dead` resolves once and the pass ends; from then on every poll answers
 * "interrupt", so no code of the pass runs again.
 */
export class QuickJsWatchdog implements PassEndings {
  /** The deadline passed (while code ran, or while the pass waited on the host). */
  timedOut = false;
  /** The sandbox's linear memory grew past the pass's limit. */
  outOfMemory = false;
  /** Why the host stopped the pass (the executor was closed, the run was cancelled). */
  killedBecause: string | undefined;
  /**
   * The WebAssembly module itself failed while it ran code (the host's stack overflowed inside
   * it, an assertion aborted it): its state is unknown, so its runtime is dropped, never freed,
   * and the module is never used again.
   */
  brokenBecause: string | undefined;
  /** Resolves when the pass must end now. */
  readonly dead: Promise<void>;
  private resolveDead!: () => void;
  private stopped = false;
  private readonly timer: ReturnType<typeof setTimeout>;

  constructor(
    private readonly memory: { readonly buffer: ArrayBuffer },
    private readonly limitBytes: number,
    private readonly deadline: number,
    /** `PassRequest.aborted`: read at each poll, so a pass whose program holds the thread can be stopped. */
    private readonly aborted?: () => boolean,
  ) {
    this.dead = new Promise<void>((resolve) => {
      this.resolveDead = resolve;
    });
    this.timer = setTimeout(() => this.timeOut(), Math.max(1, deadline - Date.now()));
  }

  /** True once the pass must end: code must not run any more. */
  get stopping(): boolean {
    return this.timedOut || this.outOfMemory || this.killedBecause !== undefined || this.brokenBecause !== undefined;
  }

  /**
   * The runtime's interrupt handler: true ends the running code with an error no program can
   * catch. Cheap enough for every poll: a clock read and the memory's size.
   */
  readonly shouldInterrupt = (): boolean => {
    if (this.stopping) return true;
    if (Date.now() >= this.deadline) {
      this.timeOut();
      return true;
    }
    if (this.aborted?.()) {
      this.kill("the pass was aborted");
      return true;
    }
    return this.checkMemory();
  };

  /**
   * Ends the pass when its memory is over the limit; true then. Called after every entry into
   * the sandbox and every callback from it too: a program may catch QuickJS's "out of memory"
   * error and go on, but the memory it took is never given back, so the check still sees it.
   */
  checkMemory(): boolean {
    if (this.outOfMemory) return true;
    if (this.memory.buffer.byteLength <= this.limitBytes) return false;
    this.exceedMemory();
    return true;
  }

  /** Ends the pass with MEMORY_LIMIT: its memory is over the limit, or could not take what the host had to copy in. */
  exceedMemory(): void {
    if (this.stopped || this.outOfMemory) return;
    this.outOfMemory = true;
    this.resolveDead();
  }

  timeOut(): void {
    if (this.stopped || this.stopping) return;
    this.timedOut = true;
    this.resolveDead();
  }

  /** Stops the pass for a reason of the host's. */
  kill(reason: string): void {
    if (this.stopped || this.stopping) return;
    this.killedBecause = reason;
    this.resolveDead();
  }

  /** The module threw on the host's side while running code of the pass (see `brokenBecause`). */
  broke(error: unknown): void {
    this.brokenBecause ??= describeHostError(error);
    this.resolveDead();
  }

  /** The pass has ended: its timer stops. */
  stop(): void {
    clearTimeout(this.timer);
    this.stopped = true;
  }
}

/** A host error as the program's own errors read (`RangeError: Maximum call stack size exceeded`). */
function describeHostError(error: unknown): string {
  const name = error instanceof Error ? error.name : "Error";
  return `${name}: ${errorMessage(error)}`;
}
