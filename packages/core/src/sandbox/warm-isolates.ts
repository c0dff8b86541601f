import type ivm from "isolated-vm";
import { type PreparedIsolate, prepareContext } from "./prepare-isolate.js";

/**
 * Warm isolates (`isolateReuse`): each pass still gets a context of its own, made for it alone,
 * in an isolate no other pass uses at that moment; the isolate outlives the pass.
 */
export interface IsolateReuse {
  /** Passes one isolate serves before it is disposed. Default 100. */
  maxPasses?: number;
  /** Age after which an isolate serves no further pass. Default 60 000 ms. */
  maxAgeMs?: number;
  /**
   * Warm isolates kept idle between passes at most; the rest are disposed. Default 64: as many
   * as passes ran at once lately stay warm (they were alive then anyway), and those idle longer
   * than `maxIdleMs` are disposed but the last.
   */
  maxIdle?: number;
  /** How long an isolate beyond the first may wait idle before it is disposed. Default 10 000 ms. */
  maxIdleMs?: number;
  /**
   * Disposed after a pass that leaves its heap above this share of the heap limit (garbage of
   * earlier passes included), so one pass filling the heap cannot make the next fail. Default 0.5.
   */
  maxHeapShare?: number;
  /**
   * Disposed after a pass that leaves its heap above this many MB in all (committed, garbage
   * included). Each context leaves garbage V8 collects lazily: a warm isolate settles at 12–16 MB
   * where a fresh one holds about 3, and a server with 100 passes in flight holds 100 of them.
   * Default 6.
   */
  maxHeapMb?: number;
}

/** `IsolateReuse` with every default filled in. */
export type IsolateReuseSettings = Required<IsolateReuse>;

export const DEFAULT_ISOLATE_REUSE: IsolateReuseSettings = {
  maxPasses: 100,
  maxAgeMs: 60_000,
  maxIdle: 64,
  maxIdleMs: 10_000,
  maxHeapShare: 0.5,
  maxHeapMb: 6,
};

/** Checks `isolateReuse` from plain JavaScript and fills in its defaults; undefined for off. */
export function isolateReuseSettings(option: IsolateReuse | boolean | undefined): IsolateReuseSettings | undefined {
  if (option === undefined || option === false) return undefined;
  if (option === true) return { ...DEFAULT_ISOLATE_REUSE };
  if (typeof option !== "object" || option === null)
    throw new TypeError(
      "isolateReuse must be true, false or { maxPasses?, maxAgeMs?, maxIdle?, maxIdleMs?, maxHeapShare?, maxHeapMb? }",
    );
  const settings = { ...DEFAULT_ISOLATE_REUSE, ...definedOnly(option) };
  const whole = (name: keyof IsolateReuse, least: number, most: number) => {
    const value = settings[name];
    if (!Number.isInteger(value) || value < least || value > most)
      throw new TypeError(`isolateReuse.${name} must be a whole number from ${least} to ${most}; got ${String(value)}`);
  };
  whole("maxPasses", 1, 1_000_000);
  whole("maxAgeMs", 1, 86_400_000);
  whole("maxIdle", 0, 1_024);
  whole("maxIdleMs", 1, 86_400_000);
  if (typeof settings.maxHeapMb !== "number" || !(settings.maxHeapMb > 0 && settings.maxHeapMb <= 65_536))
    throw new TypeError(
      `isolateReuse.maxHeapMb must be a number above 0, at most 65536; got ${String(settings.maxHeapMb)}`,
    );
  if (typeof settings.maxHeapShare !== "number" || !(settings.maxHeapShare > 0 && settings.maxHeapShare <= 1))
    throw new TypeError(
      `isolateReuse.maxHeapShare must be a number above 0, at most 1; got ${String(settings.maxHeapShare)}`,
    );
  return settings;
}

function definedOnly(option: IsolateReuse): IsolateReuse {
  return Object.fromEntries(Object.entries(option).filter(([, value]) => value !== undefined));
}

/** How long a warm isolate may take to hand over its next context before it is disposed. */
const PREPARE_LIMIT_MS = 2_000;

/** The value `promise` settles to within `ms`, or null; a later value is released when it comes. */
async function settledWithin<T extends { context: ivm.Context } | null>(
  promise: Promise<T>,
  ms: number,
): Promise<T | null> {
  let timer: NodeJS.Timeout | undefined;
  let late = false;
  const timeout = new Promise<null>((resolve) => {
    timer = setTimeout(() => {
      late = true;
      resolve(null);
    }, ms);
  });
  void promise.then((value) => {
    if (late) value?.context.release();
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** An isolate kept between passes, with the context prepared for its next pass (made while idle). */
interface WarmIsolate {
  isolate: ivm.Isolate;
  memoryMb: number;
  partition: string;
  prelude: ivm.Script;
  passes: number;
  createdAt: number;
  /** When it last went idle. */
  idleSince?: number;
  next?: Promise<Pick<PreparedIsolate, "context" | "setup"> | null>;
}

/**
 * The warm isolates of a pool (`isolateReuse`): those serving a pass now, and those idle, each
 * with a fresh context prepared for its next pass. An isolate serves one pass at a time, of one
 * partition (the runtime's name); a context serves one pass only.
 */
export class WarmIsolates {
  /** Passes that ran in a warm isolate (not the isolate's first). */
  reused = 0;
  private readonly busy = new Map<ivm.Isolate, WarmIsolate>();
  private readonly idle: WarmIsolate[] = [];
  private sweeper: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly settings: IsolateReuseSettings,
    /**
     * Prepare an idle isolate's next context on a later turn (the default), or when its next
     * pass takes it: a sandbox thread must not be inside an isolate's work when the process exits.
     */
    private readonly prepareAhead: boolean,
    /** Disposes an isolate for good (and forgets it in the pool). */
    private readonly dispose: (isolate: ivm.Isolate) => void,
  ) {}

  /** An idle isolate of `memoryMb` and `partition`, most recently used first, with a fresh context; undefined when none. */
  async take(memoryMb: number, partition: string): Promise<PreparedIsolate | undefined> {
    const now = Date.now();
    for (let index = this.idle.length - 1; index >= 0; index--) {
      const warm = this.idle[index] as WarmIsolate;
      if (warm.memoryMb !== memoryMb || warm.partition !== partition) continue;
      this.idle.splice(index, 1);
      // Bounded: no watchdog guards an isolate between passes, so one that does not hand over a
      // context in time is disposed (which stops whatever it runs) and another is used.
      const context = warm.isolate.isDisposed
        ? null
        : await settledWithin(
            warm.next ?? prepareContext(warm.isolate, warm.prelude).catch(() => null),
            PREPARE_LIMIT_MS,
          );
      delete warm.next;
      if (!context || now - warm.createdAt > this.settings.maxAgeMs || warm.isolate.isDisposed || this.closed) {
        context?.context.release();
        this.forget(warm);
        continue;
      }
      this.busy.set(warm.isolate, warm);
      this.reused++;
      return { isolate: warm.isolate, prelude: warm.prelude, ...context };
    }
    return undefined;
  }

  /** A fresh isolate now serving its first pass: it may be kept warm after it. */
  adopt(prepared: PreparedIsolate, memoryMb: number, partition: string): void {
    this.busy.set(prepared.isolate, {
      isolate: prepared.isolate,
      memoryMb,
      partition,
      prelude: prepared.prelude,
      passes: 0,
      createdAt: Date.now(),
    });
  }

  /**
   * The pass in `prepared` ended. True when its isolate was kept, idle, for another pass (its
   * context released); false when the caller must dispose it: not a warm one, not `reusable`, or
   * past its passes, age, the idle limit or its heap share.
   */
  keep(prepared: PreparedIsolate, reusable: boolean): boolean {
    const warm = this.busy.get(prepared.isolate);
    this.busy.delete(prepared.isolate);
    if (!warm || !reusable || this.closed || prepared.isolate.isDisposed) return false;
    prepared.context.release();
    warm.passes += 1;
    if (
      warm.passes >= this.settings.maxPasses ||
      Date.now() - warm.createdAt > this.settings.maxAgeMs ||
      this.idle.length >= this.settings.maxIdle ||
      heapTooLarge(prepared.isolate, this.settings)
    )
      return false;
    if (this.prepareAhead) {
      warm.next = new Promise((resolve) => setImmediate(resolve)).then(() =>
        this.closed || warm.isolate.isDisposed ? null : prepareContext(warm.isolate, warm.prelude).catch(() => null),
      );
    }
    warm.idleSince = Date.now();
    this.idle.push(warm);
    this.armSweeper();
    return true;
  }

  /** Forgets every warm isolate (the pool disposes them all) and stops the sweeper. */
  close(): void {
    this.closed = true;
    if (this.sweeper) clearTimeout(this.sweeper);
    this.idle.splice(0);
    this.busy.clear();
  }

  private forget(warm: WarmIsolate): void {
    void warm.next?.then((context) => context?.context.release());
    this.dispose(warm.isolate);
  }

  /** Disposes isolates idle longer than maxIdleMs, but the most recently used one; re-armed while more wait. */
  private sweep(): void {
    this.sweeper = undefined;
    if (this.closed) return;
    const cutoff = Date.now() - this.settings.maxIdleMs;
    for (let index = this.idle.length - 2; index >= 0; index--) {
      const warm = this.idle[index] as WarmIsolate;
      if ((warm.idleSince ?? 0) > cutoff) continue;
      this.idle.splice(index, 1);
      this.forget(warm);
    }
    this.armSweeper();
  }

  private armSweeper(): void {
    if (this.sweeper || this.idle.length < 2) return;
    // Unreferenced: idle isolates never keep the process alive.
    this.sweeper = setTimeout(() => this.sweep(), this.settings.maxIdleMs);
    this.sweeper.unref();
  }
}

/** Whether an isolate's heap is above `maxHeapShare` of its limit, or its committed heap above `maxHeapMb` (garbage included); true when unknown. */
function heapTooLarge(isolate: ivm.Isolate, settings: IsolateReuseSettings): boolean {
  try {
    const heap = isolate.getHeapStatisticsSync();
    const used = heap.used_heap_size + heap.externally_allocated_size;
    return (
      used / heap.heap_size_limit > settings.maxHeapShare ||
      heap.total_heap_size + heap.externally_allocated_size > settings.maxHeapMb * 1024 * 1024
    );
  } catch {
    return true;
  }
}
