import type ivm from "isolated-vm";
import { errorMessage } from "../../error-message.js";
import { disposeIsolate } from "./prepare-isolate.js";

/**
 * The wall-clock limit of one pass. isolated-vm's `timeout` covers only synchronous execution:
 * a loop after an `await`, or a promise that never settles, is ended here by disposing the
 * isolate at the deadline. Armed on construction; records why the pass was cut short.
 *
 * The pass waits on `dead` rather than on a promise of the isolate: the program's end comes
 * through a host callback (see install-start.ts), so every way the isolate can die — deadline,
 * heap limit while running a delivery, `close()` — must be announced here.
 */
export class IsolateWatchdog {
  /** The deadline passed while the program ran (the watchdog or a delivery's timeout fired). */
  timedOut = false;
  /** The isolate died of its heap limit while running code on a delivery (the program only sees "abandoned"). */
  outOfMemory = false;
  /** Why the isolate was disposed by someone else (the executor was closed). */
  killedBecause: string | undefined;
  /** Resolves when the isolate can run no more code: the pass must end now. */
  readonly dead: Promise<void>;
  private ended = false;
  private resolveDead!: () => void;
  private readonly timer: ReturnType<typeof setTimeout>;

  constructor(
    private readonly isolate: ivm.Isolate,
    deadline: number,
  ) {
    this.dead = new Promise<void>((resolve) => {
      this.resolveDead = resolve;
    });
    this.timer = setTimeout(() => this.timeOut(), Math.max(1, deadline - Date.now()));
  }

  timeOut(): void {
    if (this.ended) return;
    this.timedOut = true;
    disposeIsolate(this.isolate);
    this.resolveDead();
  }

  /** Disposes the isolate for a reason of the host's (the executor is closing). */
  kill(reason: string): void {
    if (this.ended) return;
    this.killedBecause ??= reason;
    disposeIsolate(this.isolate);
    this.resolveDead();
  }

  /** Code running on a delivery looped past the deadline, ran out of memory, or the isolate is gone. */
  deliveryFailed(error: unknown): void {
    const message = errorMessage(error);
    if (/timed out/i.test(message)) this.timeOut();
    else if (/memory limit/i.test(message)) {
      this.outOfMemory = true;
      this.resolveDead();
    } else if (this.isolate.isDisposed) this.resolveDead();
  }

  /** The pass has ended: nothing is disposed on its account any more. */
  stop(): void {
    clearTimeout(this.timer);
    this.ended = true;
  }
}
