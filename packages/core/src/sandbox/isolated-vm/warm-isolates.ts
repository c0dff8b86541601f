import type ivm from "isolated-vm";
import type { IsolateReuseSettings } from "./isolate-reuse.js";
import { type PreparedIsolate, prepareContext } from "./prepare-isolate.js";

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
      // Other takes may have shrunk `idle` while this one awaited a context below.
      const warm = this.idle[index];
      if (warm === undefined || warm.memoryMb !== memoryMb || warm.partition !== partition) continue;
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

  /**
   * Keeps no isolate from now on: the idle ones are disposed now, the busy ones when their pass
   * ends (a sandbox process about to end after its last passes holds nothing it will not use).
   */
  retire(): void {
    this.closed = true;
    if (this.sweeper) clearTimeout(this.sweeper);
    for (const warm of this.idle.splice(0)) this.forget(warm);
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
