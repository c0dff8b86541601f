import type ivm from "isolated-vm";
import type { IsolateReuseSettings } from "./isolate-reuse.js";
import { disposeIsolate, type PreparedIsolate, prepareIsolate } from "./prepare-isolate.js";
import { WarmIsolates } from "./warm-isolates.js";

/** Time isolated-vm needs after `dispose()` to finish tearing an isolate down (measured: 1 ms suffices). */
const TEARDOWN_MS = 5;

/** Where passes get their isolates: warm ones, prepared ahead of need, or made on the spot. */
export interface IsolatePool {
  /**
   * A context of its own for one pass, with the prelude evaluated, in a `memoryMb` isolate that
   * no other pass uses until `release`. With reuse, a warm isolate of the same `partition`.
   */
  take(memoryMb: number, partition: string): Promise<PreparedIsolate>;
  /**
   * The pass has ended. Its context is released; the isolate is disposed unless reuse is on,
   * `reusable` (the pass ended normally: no limit hit, nothing left running) and it is still
   * within its passes, age, idle limit and heap share.
   */
  release(prepared: PreparedIsolate, reusable: boolean): void;
  /** Prepares replacements for the isolates taken, on a later turn of the event loop. */
  refillSoon(): void;
  /** Resolves once the prewarmed isolates are ready. */
  warm(): Promise<void>;
  /** Isolates created and not yet disposed: prepared, idle, or serving a pass. */
  readonly live: number;
  /** Passes that ran in a warm isolate (not the isolate's first). */
  readonly reused: number;
  /** Disposes the idle and prepared isolates, and every isolate released from now on; the running ones go on. */
  retire(): void;
  /** Disposes every isolate, prepared, idle or running; nothing is prepared afterwards. */
  close(): Promise<void>;
}

/**
 * Keeps `prewarm` fresh isolates of `memoryMb` ready, and with `reuse`, the isolates of passes
 * that ended normally (`WarmIsolates`). `prepareAhead`: see `WarmIsolates`.
 */
export function createIsolatePool(
  prewarm: number,
  memoryMb: number,
  reuse?: IsolateReuseSettings,
  prepareAhead = true,
): IsolatePool {
  /** Every isolate not yet disposed, prepared, idle or in use: `close()` disposes them all. */
  const running = new Set<ivm.Isolate>();
  const ready: Array<Promise<PreparedIsolate | null>> = [];
  let closed = false;
  const dispose = (isolate: ivm.Isolate) => {
    disposeIsolate(isolate);
    running.delete(isolate);
  };
  const warmIsolates = reuse ? new WarmIsolates(reuse, prepareAhead, dispose) : undefined;
  const refill = () => {
    while (!closed && ready.length < prewarm) {
      ready.push(prepareIsolate(memoryMb, running).catch(() => null));
    }
  };
  refill();
  return {
    async take(wanted, partition) {
      const warm = await warmIsolates?.take(wanted, partition);
      if (warm) return warm;
      let prepared: PreparedIsolate | null = null;
      if (wanted === memoryMb && ready.length > 0) {
        prepared = await ready.shift()!;
        if (prepared?.isolate.isDisposed) prepared = null;
      }
      prepared ??= await prepareIsolate(wanted, running);
      warmIsolates?.adopt(prepared, wanted, partition);
      return prepared;
    },
    release(prepared, reusable) {
      if (!warmIsolates?.keep(prepared, reusable)) dispose(prepared.isolate);
    },
    refillSoon() {
      // Creating an isolate costs this thread over a millisecond: not while a pass runs.
      if (ready.length < prewarm) setImmediate(refill);
    },
    async warm() {
      await Promise.all(ready);
    },
    get live() {
      return running.size;
    },
    get reused() {
      return warmIsolates?.reused ?? 0;
    },
    retire() {
      closed = true;
      warmIsolates?.retire();
      for (const pending of ready.splice(0)) void pending.then((prepared) => prepared && dispose(prepared.isolate));
    },
    async close() {
      closed = true;
      warmIsolates?.close();
      const pending = ready.splice(0);
      for (const isolate of running) disposeIsolate(isolate);
      running.clear();
      for (const prepared of await Promise.all(pending)) if (prepared) disposeIsolate(prepared.isolate);
      // isolated-vm finishes tearing a disposed isolate down on a later turn of the event loop;
      // a process.exit() before that segfaulted about one time in ten once the program had used
      // Intl (R-RT-5). Resolve only after it: `await runtime.close(); process.exit()` is safe.
      await new Promise<void>((resolve) => setTimeout(resolve, TEARDOWN_MS));
    },
  };
}
