import { randomUUID } from "node:crypto";
import { type CodemodeRuntime, type CodemodeRuntimeOptions, createCodemodeRuntime } from "@codemode/core";
import type { KeyvLike, Lease, LockProvider } from "@codemode/core/store";
import { expect } from "vitest";
import { closeAll, suiteHooks, uniqueName } from "../story-helpers.js";
import type { StorageConformanceOptions, StorageUnderTest } from "./interface.js";

const LIMITS = { timeoutMs: 20_000 };

/** What every story of the storage suite is handed: the backend's options, and ways to open and use it. */
export interface StorageSuite {
  /** The name the suite was registered under, for messages. */
  name: string;
  options: StorageConformanceOptions;
  /** `options.shared`, default true. */
  shared: boolean;
  /** True (after printing why) when the backend is not there and this is not CI: the story returns at once. */
  cannotRun(): boolean;
  /** A storage from the factory, closed after the story. */
  open(): Promise<StorageUnderTest>;
  /** A runtime over `storage`, closed after the story (before the storages). */
  runtimeOn(
    storage: { keyv: KeyvLike; lock: LockProvider },
    settings: Partial<CodemodeRuntimeOptions> & { name: string },
  ): CodemodeRuntime;
  /** Makes the backend fail for this storage: `options.breakStorage`, or `storage.close()`. */
  breakStorage(storage: StorageUnderTest): Promise<void>;
}

/**
 * Registers the suite's hooks in the `describe` it is called in (the backend checked once before
 * the stories; what a story opened closed after it) and hands the stories their `StorageSuite`.
 */
export function storageSuite(
  name: string,
  createStorage: () => StorageUnderTest | Promise<StorageUnderTest>,
  options: StorageConformanceOptions,
): StorageSuite {
  const opened: StorageUnderTest[] = [];
  const runtimes: CodemodeRuntime[] = [];
  const cannotRun = suiteHooks(name, options.unavailable, async () => {
    await closeAll(runtimes);
    await closeAll(opened);
  });
  return {
    name,
    options,
    shared: options.shared ?? true,
    cannotRun,
    async open() {
      const storage = await createStorage();
      opened.push(storage);
      return storage;
    },
    runtimeOn(storage, settings) {
      const runtime = createCodemodeRuntime({
        limits: LIMITS,
        ...settings,
        storage: { keyv: storage.keyv, lock: storage.lock },
      });
      runtimes.push(runtime);
      return runtime;
    },
    breakStorage: options.breakStorage ?? ((storage) => storage.close()),
  };
}

/**
 * The ttl of a lease a story lets lapse, and how long it then waits. A story checks what such a
 * lease does while it is live, so its ttl leaves room for a loaded machine: in a full CI run a
 * store's round trips have taken more than 200 ms between taking a lease and using it.
 */
export const SHORT_LEASE_MS = 1_500;
export const PAST_SHORT_LEASE_MS = 1_800;

/** A lease on `key`, taken without waiting: the story fails here if the key is not free. */
export async function takeLease(lock: LockProvider, key: string, ttlMs: number): Promise<Lease> {
  const lease = await lock.acquire(key, { ttlMs, waitMs: 0 });
  expect(lease).not.toBeNull();
  return lease!;
}

/** A lock key no other story uses. */
export function lockKey(): string {
  return `conformance:${randomUUID()}`;
}

/** A runtime name no other story uses. */
export function runtimeName(): string {
  return uniqueName("conformance");
}
