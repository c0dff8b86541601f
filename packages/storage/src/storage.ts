import type { ExecutionIndexProvider, KeyvLike, LockProvider } from "@codemode/core/store";
import type Keyv from "keyv";

/**
 * What every store of this package returns, and what `createCodemodeRuntime({ storage })` takes:
 * a Keyv instance for executions and logs, a lock with leases for status changes that can race
 * (R-ST-4), the listing of executions, and `close()` for the connections the store opened.
 *
 * @example
 * import { redisStorage } from "@codemode/storage/redis";
 * const storage = redisStorage("redis://127.0.0.1:6379");
 * const runtime = createCodemodeRuntime({ connectors, storage });
 * // ... on shutdown:
 * await runtime.close();
 * await storage.close();
 */
export interface CodemodeStorage {
  /** Executions, log entries and snippets, under this storage's namespace. */
  readonly keyv: Keyv & KeyvLike;
  /** Leases on executions; across processes for Redis, PostgreSQL and SQLite. */
  readonly lock: LockProvider;
  /**
   * The listing of executions, kept natively: sorted sets on Redis, an indexed table on
   * PostgreSQL and SQLite, sorted arrays in memory. A status change costs a fixed number of round
   * trips however many executions the store holds, and touches nothing every execution shares
   * (R-RT-4); a page of a listing costs O(page).
   */
  readonly index: ExecutionIndexProvider;
  /**
   * Closes the connections this storage opened (a client passed in by the caller stays open).
   * Afterwards every operation fails, and the runtime reports STORAGE_ERROR.
   */
  close(): Promise<void>;
}

/** Options every store takes. */
export interface StorageOptions {
  /**
   * Keyv namespace: keys are stored as `<namespace>:…` (Redis: `<namespace>::…`), so several
   * applications can share one database. Runtimes in one namespace are kept apart by their
   * `name`. Default "codemode".
   */
  namespace?: string;
}

export const DEFAULT_NAMESPACE = "codemode";

/** A namespace is part of every key; SQL adapters keep keys in VARCHAR(255). */
export function checkNamespace(namespace: string | undefined): string {
  const value = namespace ?? DEFAULT_NAMESPACE;
  if (typeof value !== "string" || !/^[\w.-]{1,64}$/.test(value)) {
    throw new TypeError(
      `storage namespace must be 1–64 letters, digits, "_", "-" or "." (got ${JSON.stringify(value)})`,
    );
  }
  // Every key the runtime writes starts with "cm:", and Keyv leaves a key that already starts
  // with "<namespace>:" unprefixed on write but prefixes it on a batched read.
  if (value === "cm")
    throw new TypeError(
      `storage namespace "cm" is reserved: every key the runtime writes starts with "cm:"; choose another name`,
    );
  return value;
}
