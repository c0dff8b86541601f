import { randomUUID } from "node:crypto";

/** A held lock. Its lease lapses unless renewed; a lapsed lease means its holder is gone. */
export interface Lease {
  readonly token: string;
  /** Extends the lease; false when it had already lapsed and someone else may hold the key. */
  renew(ttlMs: number): Promise<boolean>;
  release(): Promise<void>;
  /**
   * The fenced write, offered by a lock whose leases live in the same database as the data:
   * writes `entries` (keys and text values as given to the storage's Keyv) only while this lease
   * still holds its key, checked in the same store operation as the write. True when written;
   * false, with nothing written, once the lease lapsed or its key was taken. Without it, the
   * runtime checks the lease just before each write, which leaves the time of one write
   * unguarded (docs/storage.md, "Fencing").
   */
  setIfHeld?(entries: ReadonlyArray<{ key: string; value: string }>): Promise<boolean>;
}

/**
 * A lease as an index row's write checks it: the key as given to `LockProvider.acquire`, and the
 * token of the lease that must still hold it.
 */
export interface LeaseFence {
  readonly key: string;
  readonly token: string;
}

/**
 * Serialises status changes of one execution (R-ST-4). `@codemode/storage` ships providers that
 * work across processes; the runtime's default works within one process.
 */
export interface LockProvider {
  /** Takes `key` for `ttlMs`, waiting at most `waitMs`; null when it stayed busy. */
  acquire(key: string, options: { ttlMs: number; waitMs: number }): Promise<Lease | null>;
  /** Whether a live lease holds `key` now. */
  isHeld(key: string): Promise<boolean>;
}

/**
 * Leases in this process's memory: right for the in-memory store, or any store used by one
 * process only.
 */
export function createInProcessLock(): LockProvider {
  const held = new Map<string, { token: string; expiresAt: number }>();
  const waiters = new Map<string, Set<() => void>>();

  const live = (key: string) => {
    const lease = held.get(key);
    if (lease && lease.expiresAt > Date.now()) return lease;
    if (lease) held.delete(key);
    return undefined;
  };
  const wake = (key: string) => {
    const set = waiters.get(key);
    if (!set) return;
    waiters.delete(key);
    for (const resolve of set) resolve();
  };

  return {
    async acquire(key, { ttlMs, waitMs }) {
      const deadline = Date.now() + waitMs;
      for (;;) {
        const current = live(key);
        if (!current) {
          const token = randomUUID();
          held.set(key, { token, expiresAt: Date.now() + ttlMs });
          return {
            token,
            async renew(nextTtlMs) {
              const lease = live(key);
              if (!lease || lease.token !== token) return false;
              lease.expiresAt = Date.now() + nextTtlMs;
              return true;
            },
            async release() {
              if (held.get(key)?.token === token) {
                held.delete(key);
                wake(key);
              }
            },
          };
        }
        const remaining = deadline - Date.now();
        if (remaining <= 0) return null;
        // Wake on release, or when the current lease would lapse, or at the deadline.
        await new Promise<void>((resolve) => {
          let set = waiters.get(key);
          if (!set) {
            set = new Set();
            waiters.set(key, set);
          }
          const done = () => {
            clearTimeout(timer);
            set.delete(done);
            resolve();
          };
          const timer = setTimeout(done, Math.max(1, Math.min(remaining, current.expiresAt - Date.now())));
          set.add(done);
        });
      }
    },
    async isHeld(key) {
      return live(key) !== undefined;
    },
  };
}
