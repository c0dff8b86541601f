import { randomUUID } from "node:crypto";
import type { Lease } from "@codemode/core/store";

/**
 * Waiters of one lock provider, woken when a lease of the same provider (this process) releases
 * their key. Waiters in other processes cannot be woken this way; they poll.
 */
export class LocalWakeups {
  private readonly sleepers = new Map<string, Set<() => void>>();

  /** Resolves after `ms`, or earlier when `wake(key)` is called. */
  sleep(key: string, ms: number): Promise<void> {
    return new Promise((resolve) => {
      let set = this.sleepers.get(key);
      if (!set) {
        set = new Set();
        this.sleepers.set(key, set);
      }
      const done = () => {
        clearTimeout(timer);
        set.delete(done);
        if (set.size === 0 && this.sleepers.get(key) === set) this.sleepers.delete(key);
        resolve();
      };
      const timer = setTimeout(done, ms);
      set.add(done);
    });
  }

  wake(key: string): void {
    const set = this.sleepers.get(key);
    if (set) for (const done of [...set]) done();
  }
}

/**
 * One waiter per key at a time talks to the store; the others of this process queue here, first
 * come first served. Without it, every waiting call polls the store, and a busy key (the
 * execution index) fills the connection pool with polls that the holder's own queries queue behind.
 */
export class KeyedTurns {
  private readonly queues = new Map<string, Array<(endTurn: (() => void) | null) => void>>();

  /** Waits for this key's turn until `deadline`; resolves with a function that ends the turn, or null at the deadline. */
  take(key: string, deadline: number): Promise<(() => void) | null> {
    const queue = this.queues.get(key);
    if (!queue) {
      this.queues.set(key, []);
      return Promise.resolve(this.endTurn(key));
    }
    return new Promise((resolve) => {
      const waiter = (endTurn: (() => void) | null) => {
        clearTimeout(timer);
        resolve(endTurn);
      };
      const timer = setTimeout(
        () => {
          const index = queue.indexOf(waiter);
          if (index >= 0) queue.splice(index, 1);
          resolve(null);
        },
        Math.max(0, deadline - Date.now()),
      );
      queue.push(waiter);
    });
  }

  private endTurn(key: string): () => void {
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      const next = this.queues.get(key)?.shift();
      if (next) next(this.endTurn(key));
      else this.queues.delete(key);
    };
  }
}

/**
 * Tries to take a lock until it succeeds or `waitMs` has passed. Stores with no way to wait on
 * a key (Redis without pub/sub, SQL rows) poll: a millisecond or two at first, backing off to at
 * most `maxPollMs`, jittered so racing waiters do not retry in step. Within one process only one
 * waiter per key polls (`turns`), and a release in this process wakes it at once (`wakeups`).
 * `waitMs` 0 is a single try. Each try is handed a new token, for the lease it would take.
 */
export async function acquireByPolling(
  key: string,
  attempt: (token: string) => Promise<Lease | null>,
  waitMs: number,
  local: { wakeups: LocalWakeups; turns: KeyedTurns },
  maxPollMs = 10,
): Promise<Lease | null> {
  if (waitMs <= 0) return attempt(randomUUID());
  const deadline = Date.now() + waitMs;
  const endTurn = await local.turns.take(key, deadline);
  if (!endTurn) return null;
  try {
    for (let round = 0; ; round++) {
      const lease = await attempt(randomUUID());
      if (lease) return lease;
      const remaining = deadline - Date.now();
      if (remaining <= 0) return null;
      const ceiling = Math.min(maxPollMs, 2 ** round);
      await local.wakeups.sleep(key, Math.min(remaining, 1 + Math.random() * ceiling));
    }
  } finally {
    endTurn();
  }
}

/** The per-process state `acquireByPolling` needs, one per lock provider. */
export function localWaiting(): { wakeups: LocalWakeups; turns: KeyedTurns } {
  return { wakeups: new LocalWakeups(), turns: new KeyedTurns() };
}

/** A lease's time to live as the stores keep it: whole milliseconds, at least one. */
export function wholeTtlMs(ttlMs: number): number {
  return Math.max(1, Math.ceil(ttlMs));
}
