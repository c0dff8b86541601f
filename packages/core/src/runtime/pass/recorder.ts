import { ExecutionStore, type ExecutionHead, type StoredEntry } from "../../log/execution-store.js";
import type { LogBudget } from "./log-budget.js";

/**
 * Writes the log entries of one pass in the order the pass made them. An entry at a seq beyond
 * the head's `seqLimit` is invisible to a later load until a head that raises the limit has
 * landed, so such a write carries the head with it, fenced by `confirmLease` (R-ST-4).
 */
export class PassRecorder {
  /** The limit the stored head already has. */
  private storedSeqLimit: number;
  private headWrite: Promise<void> = Promise.resolve();
  private readonly deferred = new Set<Promise<void>>();

  constructor(
    private readonly store: ExecutionStore,
    private readonly head: ExecutionHead,
    /** Mutated: every entry recorded lands here too. */
    private readonly log: Map<number, StoredEntry>,
    private readonly confirmLease: () => Promise<void>,
    /** Called when a deferred write fails: the pass must stop. */
    private readonly onDeferredFailure: (error: unknown) => void,
    /** Counts what is written against the execution's write quota. */
    private readonly budget?: LogBudget,
  ) {
    this.storedSeqLimit = head.seqLimit;
  }

  /** Writes an entry; a new seq beyond the head's limit raises the limit first, in order. */
  record(entry: StoredEntry): Promise<void> {
    this.budget?.account(entry, this.log.get(entry.seq));
    this.log.set(entry.seq, entry);
    // A deferred result comes before anything written after it.
    const earlier = this.deferred.size > 0 ? Promise.all(this.deferred) : undefined;
    const writeEntry = () => this.store.writeEntry(this.head.id, entry);
    if (entry.seq < this.storedSeqLimit) return earlier ? earlier.then(writeEntry) : writeEntry();
    if (entry.seq < this.head.seqLimit) {
      // Another call is raising the limit right now: write after it.
      this.headWrite = this.headWrite.then(async () => {
        if (earlier) await earlier;
        await writeEntry();
      });
      return this.headWrite;
    }
    this.head.seqLimit = ExecutionStore.seqLimitFor(entry.seq);
    const snapshot = { ...this.head };
    this.headWrite = this.headWrite.then(async () => {
      if (earlier) await earlier;
      await this.confirmLease();
      await this.store.writeHead(snapshot, { entries: [entry] });
      this.storedSeqLimit = Math.max(this.storedSeqLimit, snapshot.seqLimit);
    });
    return this.headWrite;
  }

  /**
   * Records a call's result without making the program wait for the store: the result goes to
   * the sandbox at once, and every later write of the pass and the end of the pass wait for it.
   * So no effect ever depends on a result that is not durable yet, and a host that dies before
   * it lands leaves the call `executing`, which re-runs with the same idempotency key (R-RP-4).
   */
  recordLater(entry: StoredEntry): void {
    const write = this.record(entry).catch((error: unknown) => this.onDeferredFailure(error));
    this.deferred.add(write);
    void write.finally(() => this.deferred.delete(write));
  }

  /** Waits for every write the pass started. */
  async drain(): Promise<void> {
    await Promise.all(this.deferred);
    await this.headWrite.catch(() => undefined);
  }
}
