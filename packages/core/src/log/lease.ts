import { CodemodeError, type ExecutionStatus } from "../outcome.js";
import type { StoreWriter } from "./interface.js";
import type { Lease, LeaseFence, LockProvider } from "./lock.js";
import { asStorageError } from "./storage-error.js";

/** What the lease helper needs: the lock, the lease length, and a way to read a run's status. */
export interface LeaseSettings {
  lock: LockProvider;
  leaseMs: number;
  /** The lock key of an execution. */
  keyOf(executionId: string): string;
  /** The execution's stored status, read to say what became of a run whose lease was lost. */
  readStatus(executionId: string): Promise<ExecutionStatus | undefined>;
}

/**
 * The share of a lease's length kept as a safety margin by the validity time: the store's clock,
 * the renew's round trip and a process that stalls between a check and a write all eat into it.
 */
const VALIDITY_MARGIN = 0.2;

/**
 * The one way an execution's lease is held (R-ST-4): acquired, renewed in the background well
 * within its length, checked before every effect (the fence), released once.
 *
 * A holder knows how long its lease is surely still held without asking the store: the time
 * since the store last confirmed it, measured from before that request was sent, against the
 * lease's length less a margin (Redlock's "validity time"). A process that stalled (a GC pause, a
 * frozen container, a suspended laptop) wakes up with that time run out, and asks the store
 * before anything else. A renew that answers false means the lease lapsed: the holder was taken
 * for gone and another may have acted, so the lease is lost for good and everything that asks
 * learns it, instead of carrying on as if nothing happened.
 */
export class ExecutionLease implements StoreWriter {
  private renewal: NodeJS.Timeout | undefined;
  private lostTo: string | undefined;
  private released = false;
  /** When the store last confirmed the lease, on both clocks (see `sinceConfirmed`). */
  private confirmedAt: { wall: number; monotonic: number };

  private constructor(
    private readonly settings: LeaseSettings,
    readonly executionId: string,
    private readonly lease: Lease,
    confirmedAt: { wall: number; monotonic: number },
  ) {
    this.confirmedAt = confirmedAt;
  }

  /**
   * Takes the lease, waiting at most `waitMs`; null when it stayed busy. A lock store that
   * cannot answer rejects with STORAGE_ERROR: an outage is never "busy" or "absent".
   */
  static async acquire(settings: LeaseSettings, executionId: string, waitMs: number): Promise<ExecutionLease | null> {
    let lease: Lease | null;
    const asked = now();
    try {
      lease = await settings.lock.acquire(settings.keyOf(executionId), { ttlMs: settings.leaseMs, waitMs });
    } catch (error) {
      throw asStorageError(`could not take the lease of execution ${executionId}`, error);
    }
    if (!lease) return null;
    // Counted from before the request, as a renew is: after a wait for a busy key that is earlier
    // than the lease's start, which only makes the holder renew sooner, never later.
    const held = new ExecutionLease(settings, executionId, lease, asked);
    held.keepRenewing();
    return held;
  }

  /** The token of the lease held now. */
  get token(): string {
    return this.lease.token;
  }

  /** The lease as an index row's write checks it (see `ExecutionIndex.put`). */
  get fence(): LeaseFence {
    return { key: this.settings.keyOf(this.executionId), token: this.lease.token };
  }

  /**
   * Writes a batch as this lease's holder (the fence on the store). With a lock that offers the
   * fenced write, the check that the lease still holds its key and the write are one store
   * operation; otherwise the lease is checked (`ensure`, or a renew with `renew`) right before
   * the plain write. Rejects with BUSY, having written nothing, once the lease is lost.
   */
  async write(
    batch: ReadonlyArray<{ key: string; value: string }>,
    plain: () => Promise<void>,
    options: { renew?: boolean } = {},
  ): Promise<void> {
    if (!this.lease.setIfHeld) {
      await (options.renew ? this.confirm() : this.ensure());
      await plain();
      return;
    }
    if (this.lostTo !== undefined || this.released) throw this.takenOver();
    let written: boolean;
    try {
      written = await this.lease.setIfHeld(batch);
    } catch (error) {
      throw asStorageError(`the store failed to write execution ${this.executionId}`, error);
    }
    if (written) return;
    await this.markLost();
    throw this.takenOver();
  }

  /** Why this lease is lost (its holder must cause no further effect), or undefined while held. */
  get lost(): string | undefined {
    return this.lostTo;
  }

  /**
   * True while the lease is surely still held without asking the store: not lost, not released,
   * and confirmed by the store less than its length less a margin ago.
   */
  get fresh(): boolean {
    return (
      this.lostTo === undefined &&
      !this.released &&
      this.sinceConfirmed() < this.settings.leaseMs * (1 - VALIDITY_MARGIN)
    );
  }

  /**
   * The fence: true while this holder still owns the execution — its lease renewed now. Rejects
   * with STORAGE_ERROR when the store cannot say.
   */
  async hold(): Promise<boolean> {
    if (this.lostTo !== undefined) return false;
    if (this.released) return false;
    const asked = now();
    let renewed: boolean;
    try {
      renewed = await this.lease.renew(this.settings.leaseMs);
    } catch (error) {
      throw asStorageError(`the store failed to renew the lease of execution ${this.executionId}`, error);
    }
    if (renewed) {
      if (asked.monotonic > this.confirmedAt.monotonic) this.confirmedAt = asked;
      return true;
    }
    await this.markLost();
    return false;
  }

  /**
   * Before an effect: true at once while the lease is fresh; otherwise asks the store (`hold`).
   * A pass calls it before each call's write-ahead, before running a tool and before each write.
   */
  async check(): Promise<boolean> {
    return this.fresh || this.hold();
  }

  /** Like `hold`, but rejects with BUSY once the lease is lost. Awaited before fenced writes. */
  async confirm(): Promise<void> {
    if (!(await this.hold())) throw this.takenOver();
  }

  /** Like `check`, but rejects with BUSY once the lease is lost. */
  async ensure(): Promise<void> {
    if (!(await this.check())) throw this.takenOver();
  }

  /** The error a holder reports once it lost the execution to someone else. */
  takenOver(): CodemodeError {
    return new CodemodeError(
      "BUSY",
      `execution ${this.executionId} was taken over while this pass ran (its lease lapsed; it is now ${this.lostTo ?? "held elsewhere"}); this pass's result is not recorded`,
    );
  }

  /** Stops renewing and frees the key. Idempotent; a failing release only lets the lease lapse. */
  async release(): Promise<void> {
    this.stopRenewing();
    if (this.released) return;
    this.released = true;
    await this.lease.release().catch(() => undefined);
  }

  /**
   * The time since the store last confirmed the lease: the larger of the wall clock's and the
   * monotonic clock's, since one stops while a machine sleeps and the other may be set back.
   */
  private sinceConfirmed(): number {
    const current = now();
    return Math.max(current.wall - this.confirmedAt.wall, current.monotonic - this.confirmedAt.monotonic);
  }

  private async markLost(): Promise<void> {
    if (this.lostTo !== undefined) return;
    this.lostTo = "held elsewhere";
    this.stopRenewing();
    // Only for the message: what became of the run, if the store can say.
    const status = await this.settings.readStatus(this.executionId).catch(() => undefined);
    if (status !== undefined && status !== "running") this.lostTo = status;
  }

  private keepRenewing(): void {
    // Renewed well within its length: a longer interval would let a short lease lapse mid-pass.
    this.renewal = setInterval(() => {
      this.hold().catch(() => undefined);
    }, this.settings.leaseMs / 3);
    this.renewal.unref();
  }

  private stopRenewing(): void {
    if (this.renewal) clearInterval(this.renewal);
    this.renewal = undefined;
  }
}

function now(): { wall: number; monotonic: number } {
  return { wall: Date.now(), monotonic: performance.now() };
}

/**
 * Runs `operation` holding the execution's lease, released afterwards; null when the lease
 * stayed busy for `waitMs`. The operation may release earlier (for hooks that run once the
 * record is written and the execution is free).
 */
export async function withLease<T>(
  settings: LeaseSettings,
  executionId: string,
  waitMs: number,
  operation: (lease: ExecutionLease) => Promise<T>,
): Promise<T | null> {
  const lease = await ExecutionLease.acquire(settings, executionId, waitMs);
  if (!lease) return null;
  try {
    return await operation(lease);
  } finally {
    await lease.release();
  }
}
