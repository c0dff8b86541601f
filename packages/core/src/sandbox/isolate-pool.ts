import type ivm from "isolated-vm";
import { disposeIsolate, type PreparedIsolate, prepareIsolate } from "./prepare-isolate.js";

/** Time isolated-vm needs after `dispose()` to finish tearing an isolate down (measured: 1 ms suffices). */
const TEARDOWN_MS = 5;

/** Where passes get their isolates: prepared ahead of need, or made on the spot. */
export interface IsolatePool {
  /** A prepared isolate with a `memoryMb` heap: a prewarmed one when one fits, else a new one. */
  take(memoryMb: number): Promise<PreparedIsolate>;
  /** Disposes an isolate whose pass has ended. */
  release(isolate: ivm.Isolate): void;
  /** Prepares replacements for the isolates taken, on a later turn of the event loop. */
  refillSoon(): void;
  /** Resolves once the prewarmed isolates are ready. */
  warm(): Promise<void>;
  /** Isolates created and not yet disposed: prepared, or serving a pass. */
  readonly live: number;
  /** Disposes every isolate, prepared or running; nothing is prepared afterwards. */
  close(): Promise<void>;
}

/**
 * Keeps `prewarm` isolates of `memoryMb` ready. Each serves exactly one pass and is disposed
 * after it: nothing is ever shared between passes or executions.
 */
export function createIsolatePool(prewarm: number, memoryMb: number): IsolatePool {
  /** Every isolate not yet disposed, prepared or in use: `close()` disposes them all. */
  const running = new Set<ivm.Isolate>();
  const ready: Array<Promise<PreparedIsolate | null>> = [];
  let closed = false;
  const refill = () => {
    while (!closed && ready.length < prewarm) {
      ready.push(prepareIsolate(memoryMb, running).catch(() => null));
    }
  };
  refill();
  return {
    async take(wantedMemoryMb) {
      if (wantedMemoryMb === memoryMb && ready.length > 0) {
        const prepared = await ready.shift()!;
        if (prepared && !prepared.isolate.isDisposed) return prepared;
      }
      return prepareIsolate(wantedMemoryMb, running);
    },
    release(isolate) {
      disposeIsolate(isolate);
      running.delete(isolate);
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
    async close() {
      closed = true;
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
