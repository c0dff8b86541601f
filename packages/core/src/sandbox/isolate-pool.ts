import type ivm from "isolated-vm";
import { disposeIsolate, type PreparedIsolate, prepareContext, prepareIsolate } from "./prepare-isolate.js";

/** Time isolated-vm needs after `dispose()` to finish tearing an isolate down (measured: 1 ms suffices). */
const TEARDOWN_MS = 5;

/**
 * Warm isolates (`isolateReuse`): each pass still gets a context of its own, made for it alone,
 * in an isolate no other pass uses at that moment; the isolate outlives the pass.
 */
export interface IsolateReuse {
  /** Passes one isolate serves before it is disposed. Default 100. */
  maxPasses?: number;
  /** Age after which an isolate serves no further pass. Default 60 000 ms. */
  maxAgeMs?: number;
  /** Warm isolates kept idle between passes; the rest are disposed. Default 4. */
  maxIdle?: number;
  /**
   * Disposed after a pass that leaves its heap above this share of the heap limit (garbage of
   * earlier passes included), so one pass filling the heap cannot make the next fail. Default 0.5.
   */
  maxHeapShare?: number;
}

/** `IsolateReuse` with every default filled in. */
export type IsolateReuseSettings = Required<IsolateReuse>;

export const DEFAULT_ISOLATE_REUSE: IsolateReuseSettings = {
  maxPasses: 100,
  maxAgeMs: 60_000,
  maxIdle: 4,
  maxHeapShare: 0.5,
};

/** Checks `isolateReuse` from plain JavaScript and fills in its defaults; undefined for off. */
export function isolateReuseSettings(option: IsolateReuse | boolean | undefined): IsolateReuseSettings | undefined {
  if (option === undefined || option === false) return undefined;
  if (option === true) return { ...DEFAULT_ISOLATE_REUSE };
  if (typeof option !== "object" || option === null)
    throw new TypeError("isolateReuse must be true, false or { maxPasses?, maxAgeMs?, maxIdle?, maxHeapShare? }");
  const settings = { ...DEFAULT_ISOLATE_REUSE, ...definedOnly(option) };
  const whole = (name: keyof IsolateReuse, least: number, most: number) => {
    const value = settings[name];
    if (!Number.isInteger(value) || value < least || value > most)
      throw new TypeError(`isolateReuse.${name} must be a whole number from ${least} to ${most}; got ${String(value)}`);
  };
  whole("maxPasses", 1, 1_000_000);
  whole("maxAgeMs", 1, 86_400_000);
  whole("maxIdle", 0, 1_024);
  if (typeof settings.maxHeapShare !== "number" || !(settings.maxHeapShare > 0 && settings.maxHeapShare <= 1))
    throw new TypeError(
      `isolateReuse.maxHeapShare must be a number above 0, at most 1; got ${String(settings.maxHeapShare)}`,
    );
  return settings;
}

function definedOnly(option: IsolateReuse): IsolateReuse {
  return Object.fromEntries(Object.entries(option).filter(([, value]) => value !== undefined));
}

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
   * within its passes, age and heap share.
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
  /** Disposes every isolate, prepared, idle or running; nothing is prepared afterwards. */
  close(): Promise<void>;
}

/** An isolate kept between passes, with the context prepared for its next pass (made while idle). */
interface WarmIsolate {
  isolate: ivm.Isolate;
  memoryMb: number;
  partition: string;
  prelude: ivm.Script;
  passes: number;
  createdAt: number;
  next?: Promise<Pick<PreparedIsolate, "context" | "setup"> | null>;
}

/**
 * Keeps `prewarm` fresh isolates of `memoryMb` ready, and with `reuse`, the isolates of passes
 * that ended normally, idle, each with a fresh context prepared for its next pass while the
 * process has nothing else to do. A context serves one pass only; an isolate serves one pass at
 * a time, of one partition (the runtime's name).
 */
export function createIsolatePool(
  prewarm: number,
  memoryMb: number,
  reuse?: IsolateReuseSettings,
  /**
   * Prepare a warm isolate's next context while idle (the default), or when its next pass takes
   * it: a sandbox thread must not be inside an isolate's work when the process exits.
   */
  prepareAhead = true,
): IsolatePool {
  /** Every isolate not yet disposed, prepared, idle or in use: `close()` disposes them all. */
  const running = new Set<ivm.Isolate>();
  const ready: Array<Promise<PreparedIsolate | null>> = [];
  /** Warm isolates serving a pass now, by isolate. */
  const busy = new Map<ivm.Isolate, WarmIsolate>();
  const idle: WarmIsolate[] = [];
  let reused = 0;
  let closed = false;
  const refill = () => {
    while (!closed && ready.length < prewarm) {
      ready.push(prepareIsolate(memoryMb, running).catch(() => null));
    }
  };
  refill();

  const dispose = (isolate: ivm.Isolate) => {
    disposeIsolate(isolate);
    running.delete(isolate);
    busy.delete(isolate);
  };
  /** A fresh context for a warm isolate's next pass, made on a later turn (while the process is idle). */
  const prepareNext = (warm: WarmIsolate) => {
    if (!prepareAhead) return;
    warm.next = new Promise((resolve) => setImmediate(resolve)).then(() =>
      closed || warm.isolate.isDisposed ? null : prepareContext(warm.isolate, warm.prelude).catch(() => null),
    );
  };
  const takeWarm = async (wanted: number, partition: string): Promise<PreparedIsolate | undefined> => {
    if (!reuse) return undefined;
    const now = Date.now();
    for (let index = idle.length - 1; index >= 0; index--) {
      const warm = idle[index] as WarmIsolate;
      if (warm.memoryMb !== wanted || warm.partition !== partition) continue;
      idle.splice(index, 1);
      const context = warm.isolate.isDisposed
        ? null
        : await (warm.next ?? prepareContext(warm.isolate, warm.prelude).catch(() => null));
      delete warm.next;
      if (!context || now - warm.createdAt > reuse.maxAgeMs || warm.isolate.isDisposed || closed) {
        if (context) context.context.release();
        dispose(warm.isolate);
        continue;
      }
      busy.set(warm.isolate, warm);
      reused++;
      return { isolate: warm.isolate, prelude: warm.prelude, ...context };
    }
    return undefined;
  };
  const takeFresh = async (wanted: number, partition: string): Promise<PreparedIsolate> => {
    let prepared: PreparedIsolate | null = null;
    if (wanted === memoryMb && ready.length > 0) {
      prepared = await ready.shift()!;
      if (prepared?.isolate.isDisposed) prepared = null;
    }
    prepared ??= await prepareIsolate(wanted, running);
    if (reuse)
      busy.set(prepared.isolate, {
        isolate: prepared.isolate,
        memoryMb: wanted,
        partition,
        prelude: prepared.prelude,
        passes: 0,
        createdAt: Date.now(),
      });
    return prepared;
  };

  return {
    async take(wanted, partition) {
      return (await takeWarm(wanted, partition)) ?? (await takeFresh(wanted, partition));
    },
    release(prepared, reusable) {
      const warm = busy.get(prepared.isolate);
      busy.delete(prepared.isolate);
      if (!reuse || !warm || !reusable || closed || prepared.isolate.isDisposed) {
        dispose(prepared.isolate);
        return;
      }
      prepared.context.release();
      warm.passes += 1;
      if (
        warm.passes >= reuse.maxPasses ||
        Date.now() - warm.createdAt > reuse.maxAgeMs ||
        idle.length >= reuse.maxIdle ||
        heapShare(prepared.isolate) > reuse.maxHeapShare
      ) {
        dispose(prepared.isolate);
        return;
      }
      prepareNext(warm);
      idle.push(warm);
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
      return reused;
    },
    async close() {
      closed = true;
      const pending = ready.splice(0);
      idle.splice(0);
      for (const isolate of running) disposeIsolate(isolate);
      running.clear();
      busy.clear();
      for (const prepared of await Promise.all(pending)) if (prepared) disposeIsolate(prepared.isolate);
      // isolated-vm finishes tearing a disposed isolate down on a later turn of the event loop;
      // a process.exit() before that segfaulted about one time in ten once the program had used
      // Intl (R-RT-5). Resolve only after it: `await runtime.close(); process.exit()` is safe.
      await new Promise<void>((resolve) => setTimeout(resolve, TEARDOWN_MS));
    },
  };
}

/** The share of its heap limit an isolate uses now (garbage not yet collected included); 1 when unknown. */
function heapShare(isolate: ivm.Isolate): number {
  try {
    const heap = isolate.getHeapStatisticsSync();
    return (heap.used_heap_size + heap.externally_allocated_size) / heap.heap_size_limit;
  } catch {
    return 1;
  }
}
