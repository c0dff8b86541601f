import { describe } from "vitest";
import { fencedWriteStories } from "./conformance/fenced-write.js";
import type { StorageConformanceOptions, StorageUnderTest } from "./conformance/interface.js";
import { frozenHostStory } from "./conformance/lapsed-pass.js";
import { leaseStories } from "./conformance/leases.js";
import { logCostStories } from "./conformance/log-cost.js";
import { resumeStories } from "./conformance/resume.js";
import { runtimeNameStories } from "./conformance/runtime-names.js";
import { storageFailureStories } from "./conformance/storage-failures.js";
import { storageSuite } from "./conformance/storage-suite.js";

/**
 * The storage conformance suite: registers vitest stories that check a store does what the
 * durable runtime relies on — per-entry writes (R-ST-1), one batched log read (R-ST-2), resuming
 * from the store alone (R-ST-3), leases that exclude, lapse and fence (R-ST-4), failures that
 * surface as STORAGE_ERROR and never as "not found" (R-ST-5), namespacing by runtime name, and
 * concurrent approvals that run an action once (R-AP-6). The factory is called once per story
 * (twice for stories about a second process); every story uses its own runtime name and lock
 * keys, so a shared database needs no cleaning between stories.
 *
 * @example
 * // my-store.test.ts
 * import { createInProcessLock } from "@codemode/core/store";
 * import { runStorageConformance } from "@codemode/storage/testing";
 * import Keyv from "keyv";
 *
 * runStorageConformance("my adapter", () => {
 *   const keyv = new Keyv({ store: new MyAdapter(process.env.MY_URL) });
 *   return { keyv, lock: createInProcessLock(), close: () => keyv.disconnect() };
 * });
 */
export function runStorageConformance(
  name: string,
  createStorage: () => StorageUnderTest | Promise<StorageUnderTest>,
  options: StorageConformanceOptions = {},
): void {
  // One suite per concern, each in its own file under ./conformance/, as Keyv's test suite is split.
  describe(`${name}: storage conformance`, () => {
    const suite = storageSuite(name, createStorage, options);
    leaseStories(suite);
    if (options.fenced) fencedWriteStories(suite);
    describe("the durable log on this store", () => {
      logCostStories(suite);
      runtimeNameStories(suite);
      resumeStories(suite);
      frozenHostStory(suite);
      storageFailureStories(suite);
    });
  });
}

export type { StorageConformanceOptions, StorageUnderTest } from "./conformance/interface.js";
