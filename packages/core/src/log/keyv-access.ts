import type { KeyvLike } from "./interface.js";
import { asStorageError } from "./storage-error.js";

/**
 * Reads and writes over a Keyv instance that never mistake an outage for a missing key: Keyv is
 * told to throw, and every failure becomes STORAGE_ERROR naming what was being done. Shared by
 * the execution store and the generic execution index.
 */
export interface KeyvAccess {
  guard<T>(what: string, operation: () => Promise<T>): Promise<T>;
  getMany(keys: string[], what: string): Promise<unknown[]>;
  setMany(entries: Array<{ key: string; value: string }>, what: string): Promise<void>;
  deleteMany(keys: string[], what: string): Promise<void>;
}

export function keyvAccess(keyv: KeyvLike): KeyvAccess {
  // Keyv 5 swallows adapter errors unless told otherwise; a failed read would look like "not found".
  keyv.throwOnErrors = true;
  // Some adapters (KeyvRedis) swallow errors behind a switch of their own, returning "missing".
  const adapter = adapterOf(keyv);
  if (adapter && "throwOnErrors" in adapter) adapter.throwOnErrors = true;
  keyv.on?.("error", () => {
    // Errors are thrown to the caller (throwOnErrors); the listener keeps Keyv 6 from also rejecting unhandled.
  });
  // Over an adapter without getMany, Keyv's getMany reads key by key and turns a failed read into
  // a missing key, even with throwOnErrors: a log entry would vanish and its call run again.
  const batchedReads = typeof keyv.getMany === "function" && !(adapter && typeof adapter.getMany !== "function");
  const guard = async <T>(what: string, operation: () => Promise<T>): Promise<T> => {
    try {
      return await operation();
    } catch (error) {
      throw asStorageError(`the store failed to ${what}`, error);
    }
  };
  return {
    guard,
    getMany: async (keys, what) => {
      if (keys.length === 0) return [];
      return guard(what, async () =>
        batchedReads
          ? (keyv.getMany as (keys: string[]) => Promise<unknown[]>)(keys)
          : Promise.all(keys.map((key) => keyv.get(key))),
      );
    },
    setMany: (entries, what) =>
      guard(what, async () => {
        const results = keyv.setMany
          ? await keyv.setMany(entries)
          : await Promise.all(entries.map((entry) => keyv.set(entry.key, entry.value)));
        if (Array.isArray(results) && results.some((ok) => ok === false)) throw new Error("the store refused a write");
      }),
    deleteMany: (keys, what) =>
      guard(what, async () => {
        if (keyv.deleteMany) await keyv.deleteMany(keys);
        else await Promise.all(keys.map((key) => keyv.delete(key)));
      }),
  };
}

/** The adapter under a Keyv instance, if any (a Map has no getMany and never fails). */
function adapterOf(keyv: KeyvLike): { getMany?: unknown; throwOnErrors?: unknown } | undefined {
  const adapter = keyv.store;
  return typeof adapter === "object" && adapter !== null && !(adapter instanceof Map)
    ? (adapter as { getMany?: unknown; throwOnErrors?: unknown })
    : undefined;
}
