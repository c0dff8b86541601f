import { ExecutionStore } from "../../log/execution-store.js";
import type { ExecutionHead, StoredEntry, StoreWriter } from "../../log/interface.js";
import type { LogBudget } from "./log-budget.js";

/**
 * How long a result recorded with `recordLater` may wait for company: the next call's write-ahead
 * usually comes within it, and both go to the store in one batch.
 */
const LATER_MS = 1;

interface Waiter {
  resolve(): void;
  reject(error: unknown): void;
}

/**
 * Writes the log entries of one pass in the order the pass made them (see docs/decisions.md,
 * "Log writes: one batch in flight"). At most one batch of an execution is in flight; entries
 * recorded meanwhile go together in the next one, so a store that applies a batch in order (or
 * atomically) never holds an entry without every entry recorded before it. An entry at a seq
 * beyond the head's `seqLimit` is invisible to a later load until a head that raises the limit
 * has landed, so such a batch carries the head, last (R-ST-4). Every batch is written by the
 * lease's holder (`StoreWriter`): where the lock can, the store checks the lease in the same
 * operation as the write; otherwise the lease is checked right before it (and renewed before a
 * head). A pass whose process stalled past its lease writes nothing once the lease is lost.
 */
export class PassRecorder {
  /** The limit the stored head already has. */
  private storedSeqLimit: number;
  /** Entries waiting for the next batch, by seq (a later record of a seq replaces the earlier). */
  private readonly queued = new Map<number, StoredEntry>();
  private waiters: Waiter[] = [];
  private inFlight: Promise<void> | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** A batch must follow the one in flight as soon as it lands (something waits on it). */
  private urgent = false;

  constructor(
    private readonly store: ExecutionStore,
    private readonly head: ExecutionHead,
    /** Mutated: every entry recorded lands here too. */
    private readonly log: Map<number, StoredEntry>,
    /** The execution's lease, through which every batch is written. */
    private readonly lease: StoreWriter,
    /** Called when a write of `recordLater` fails: the pass must stop. */
    private readonly onDeferredFailure: (error: unknown) => void,
    /** Counts what is written against the execution's write quota. */
    private readonly budget?: LogBudget,
  ) {
    this.storedSeqLimit = head.seqLimit;
  }

  /** Writes an entry after every entry recorded before it; resolves once it is in the store. */
  record(entry: StoredEntry): Promise<void> {
    const landed = new Promise<void>((resolve, reject) => this.waiters.push({ resolve, reject }));
    this.enqueue(entry);
    this.flushSoon(true);
    return landed;
  }

  /**
   * Records a call's result without making the program wait for the store: the result goes to
   * the sandbox at once and the entry joins the next batch (at the latest `LATER_MS` from now, or
   * with the next call's write-ahead). Every later write of the pass and the end of the pass come
   * after it, so no effect ever depends on a result that is not durable yet; a host that dies
   * before it lands leaves the call `executing` (it re-runs with the same idempotency key,
   * R-RP-4) or, for a read-only tool, unrecorded (it simply runs again).
   */
  recordLater(entry: StoredEntry): void {
    this.enqueue(entry);
    this.waiters.push({ resolve: () => undefined, reject: (error) => this.onDeferredFailure(error) });
    this.flushSoon(false);
  }

  /** Writes what is queued now and waits for every write the pass started. */
  async drain(): Promise<void> {
    while (this.inFlight || this.queued.size > 0) {
      this.flushSoon(true);
      await this.inFlight?.catch(() => undefined);
    }
  }

  private enqueue(entry: StoredEntry): void {
    this.budget?.account(entry, this.log.get(entry.seq));
    this.log.set(entry.seq, entry);
    this.queued.delete(entry.seq);
    this.queued.set(entry.seq, entry);
    // Raised now, so the head of any later transition already covers this seq.
    if (entry.seq >= this.head.seqLimit) this.head.seqLimit = ExecutionStore.seqLimitFor(entry.seq);
  }

  private flushSoon(urgent: boolean): void {
    if (this.inFlight) {
      if (urgent) this.urgent = true;
      return;
    }
    if (urgent) {
      this.flush();
      return;
    }
    this.timer ??= setTimeout(() => this.flush(), LATER_MS);
  }

  private flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.urgent = false;
    if (this.queued.size === 0) return;
    const entries = [...this.queued.values()];
    const waiters = this.waiters;
    this.queued.clear();
    this.waiters = [];
    const write = this.writeBatch(entries).then(
      () => {
        for (const waiter of waiters) waiter.resolve();
      },
      (error: unknown) => {
        for (const waiter of waiters) waiter.reject(error);
      },
    );
    this.inFlight = write.finally(() => {
      this.inFlight = undefined;
      if (this.queued.size > 0) this.flushSoon(this.urgent);
    });
  }

  private async writeBatch(entries: StoredEntry[]): Promise<void> {
    if (!entries.some((entry) => entry.seq >= this.storedSeqLimit)) {
      await this.store.writeEntries(this.lease, this.head.id, entries);
      return;
    }
    const snapshot = { ...this.head };
    await this.store.writeHead(this.lease, snapshot, { entries, renew: true });
    this.storedSeqLimit = Math.max(this.storedSeqLimit, snapshot.seqLimit);
  }
}
