import { CodemodeError, type ExecutionStatus } from "../outcome.js";
import type { Lease, LockProvider } from "./lock.js";
import { asStorageError } from "./storage-error.js";

/** What the lease helper needs: the lock, the lease length, and a way to read a run's status. */
export interface LeaseSettings {
  lock: LockProvider;
  leaseMs: number;
  /** The lock key of an execution. */
  keyOf(executionId: string): string;
  /** The execution's stored status, read when a lapsed lease is retaken (fencing). */
  readStatus(executionId: string): Promise<ExecutionStatus | undefined>;
}

/**
 * The one way an execution's lease is held (R-ST-4): acquired, renewed in the background well
 * within its length, checked before writes that change the run's status (the fence), released
 * once. A renew that answers false means the holder was taken for gone: the lease is lost for
 * good and everything that asks learns it, instead of carrying on as if nothing happened.
 */
export class ExecutionLease {
  private renewal: NodeJS.Timeout | undefined;
  private lostTo: string | undefined;
  private released = false;

  private constructor(
    private readonly settings: LeaseSettings,
    readonly executionId: string,
    private lease: Lease,
  ) {}

  /**
   * Takes the lease, waiting at most `waitMs`; null when it stayed busy. A lock store that
   * cannot answer rejects with STORAGE_ERROR: an outage is never "busy" or "absent".
   */
  static async acquire(settings: LeaseSettings, executionId: string, waitMs: number): Promise<ExecutionLease | null> {
    let lease: Lease | null;
    try {
      lease = await settings.lock.acquire(settings.keyOf(executionId), { ttlMs: settings.leaseMs, waitMs });
    } catch (error) {
      throw asStorageError(`could not take the lease of execution ${executionId}`, error);
    }
    if (!lease) return null;
    const held = new ExecutionLease(settings, executionId, lease);
    held.keepRenewing();
    return held;
  }

  /** The token of the lease held now (it changes when a lapsed lease is retaken). */
  get token(): string {
    return this.lease.token;
  }

  /** Why this lease is lost (its holder must cause no further effect), or undefined while held. */
  get lost(): string | undefined {
    return this.lostTo;
  }

  /**
   * The fence: true while this holder still owns the execution — its lease renewed now, or,
   * after a lapse nobody acted on, retaken with the record still `running`. Rejects with
   * STORAGE_ERROR when the store cannot say.
   */
  async hold(): Promise<boolean> {
    if (this.lostTo !== undefined) return false;
    if (this.released) return false;
    let renewed: boolean;
    try {
      renewed = await this.lease.renew(this.settings.leaseMs);
    } catch (error) {
      throw asStorageError(`the store failed to renew the lease of execution ${this.executionId}`, error);
    }
    if (renewed) return true;
    return this.retake();
  }

  /** Like `hold`, but rejects with BUSY once the lease is lost. Awaited before fenced writes. */
  async confirm(): Promise<void> {
    if (!(await this.hold())) throw this.takenOver();
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

  private async retake(): Promise<boolean> {
    let retaken: Lease | null;
    let status: ExecutionStatus | undefined;
    try {
      retaken = await this.settings.lock.acquire(this.settings.keyOf(this.executionId), { ttlMs: this.settings.leaseMs, waitMs: 0 });
      status = retaken ? await this.settings.readStatus(this.executionId) : undefined;
    } catch (error) {
      throw asStorageError(`the store failed to check the lease of execution ${this.executionId}`, error);
    }
    if (retaken && status === "running") {
      this.lease = retaken;
      return true;
    }
    await retaken?.release().catch(() => undefined);
    this.markLost(status ?? "held elsewhere");
    return false;
  }

  private markLost(reason: string): void {
    this.lostTo ??= reason;
    this.stopRenewing();
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

/**
 * Runs `operation` holding the execution's lease, released afterwards; null when the lease
 * stayed busy for `waitMs`. The operation may release earlier (for hooks that run once the
 * record is written and the execution is free).
 */
export async function withLease<T>(settings: LeaseSettings, executionId: string, waitMs: number, operation: (lease: ExecutionLease) => Promise<T>): Promise<T | null> {
  const lease = await ExecutionLease.acquire(settings, executionId, waitMs);
  if (!lease) return null;
  try {
    return await operation(lease);
  } finally {
    await lease.release();
  }
}
