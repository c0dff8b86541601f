import type { KeyvLike, LockProvider } from "@codemode/core/store";

/** What the runtime asked of a Keyv instance, counted by `countingKeyv`. */
export interface KeyvCounts {
  /**
   * Characters of the values handed to `set` and `setMany`, and to a lease's fenced write when
   * the lock is wrapped with `countingLock` (the store's own framing not included).
   */
  charactersWritten: number;
  /** Keys written, one per key of `setMany`. */
  keysWritten: number;
  /** Keys read with `get`, one entry per call. */
  gets: string[];
  /** Keys read with `getMany`, one list per call. */
  getManys: string[][];
}

/**
 * Wraps a Keyv instance so that every write and read the runtime makes is counted; everything
 * else (the adapter, error switches, listeners) reaches the instance unchanged.
 *
 * @example
 * const { keyv, counts, reset } = countingKeyv(storage.keyv);
 * const runtime = createCodemodeRuntime({ storage: { keyv, lock: storage.lock } });
 */
export function countingKeyv<K extends KeyvLike>(keyv: K): { keyv: K; counts: KeyvCounts; reset(): void } {
  const counts: KeyvCounts = { charactersWritten: 0, keysWritten: 0, gets: [], getManys: [] };
  const reset = () => {
    counts.charactersWritten = 0;
    counts.keysWritten = 0;
    counts.gets = [];
    counts.getManys = [];
  };
  const wrapped = new Proxy(keyv, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== "function") return value;
      const method = value as (...args: unknown[]) => unknown;
      switch (property) {
        case "set":
          return (key: string, written: unknown, ttl?: number) => {
            counts.keysWritten += 1;
            counts.charactersWritten += String(written).length;
            return method.call(target, key, written, ttl);
          };
        case "setMany":
          return (entries: Array<{ key: string; value: unknown }>) => {
            for (const entry of entries) {
              counts.keysWritten += 1;
              counts.charactersWritten += String(entry.value).length;
            }
            return method.call(target, entries);
          };
        case "get":
          return (key: string, ...rest: unknown[]) => {
            counts.gets.push(key);
            return method.call(target, key, ...rest);
          };
        case "getMany":
          return (keys: string[], ...rest: unknown[]) => {
            counts.getManys.push([...keys]);
            return method.call(target, keys, ...rest);
          };
        default:
          return method.bind(target);
      }
    },
    set(target, property, value) {
      return Reflect.set(target, property, value, target);
    },
  });
  return { keyv: wrapped, counts, reset };
}

/**
 * Wraps a lock so that its leases' fenced writes (`setIfHeld`) count in `counts` as Keyv writes
 * do: a store whose leases write the log themselves would otherwise look as if it wrote nothing.
 *
 * @example
 * const { keyv, counts } = countingKeyv(storage.keyv);
 * const runtime = createCodemodeRuntime({ storage: { keyv, lock: countingLock(storage.lock, counts) } });
 */
export function countingLock(lock: LockProvider, counts: KeyvCounts): LockProvider {
  return {
    isHeld: (key) => lock.isHeld(key),
    async acquire(key, options) {
      const lease = await lock.acquire(key, options);
      if (!lease?.setIfHeld) return lease;
      const fenced = lease.setIfHeld.bind(lease);
      return {
        token: lease.token,
        renew: (ttlMs) => lease.renew(ttlMs),
        release: () => lease.release(),
        setIfHeld: (entries) => {
          for (const entry of entries) {
            counts.keysWritten += 1;
            counts.charactersWritten += entry.value.length;
          }
          return fenced(entries);
        },
      };
    },
  };
}
