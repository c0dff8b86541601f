import { randomUUID } from "node:crypto";
import type { Lease, LockProvider } from "@codemode/core/store";
import { describe, expect, it } from "vitest";
import { sleep } from "../story-helpers.js";
import { lostLeaseStory } from "./lapsed-pass.js";
import {
  lockKey,
  PAST_SHORT_LEASE_MS,
  runtimeName,
  SHORT_LEASE_MS,
  type StorageSuite,
  takeLease,
} from "./storage-suite.js";

type FencedLease = Lease & { setIfHeld: NonNullable<Lease["setIfHeld"]> };

/**
 * The fenced write (R-ST-6), for stores whose leases offer it: `Lease.setIfHeld` writes as the
 * store's Keyv would, and writes nothing once the lease lapsed; so does a fenced put of the listing.
 */
export function fencedWriteStories(suite: StorageSuite): void {
  const { cannotRun, open } = suite;

  describe("the fenced write (R-ST-6)", () => {
    it("a held lease writes as the store's Keyv would: every value reads back by get and getMany, as written", async () => {
      if (cannotRun()) return;
      const { keyv, lock } = await open();
      const key = lockKey();
      const lease = await fencedLease(lock, key, 10_000);
      // Text Keyv's serializer escapes (a leading ":"), JSON, and characters beyond ASCII.
      const values = [":starts with a colon", '{"seq":3,"state":"applied"}', "async () => 'naïve ✓ 😀'", ""];
      const keys = values.map((_, position) => `cm:${key}:${position}`);
      expect(
        await lease.setIfHeld(keys.map((entryKey, position) => ({ key: entryKey, value: values[position]! }))),
      ).toBe(true);
      for (const [position, entryKey] of keys.entries()) expect(await keyv.get(entryKey)).toBe(values[position]);
      expect(await keyv.getMany!(keys)).toEqual(values);
      // And what Keyv itself writes there, the fenced write overwrites.
      await keyv.set(keys[0]!, "written by keyv");
      expect(await lease.setIfHeld([{ key: keys[0]!, value: "fenced again" }])).toBe(true);
      expect(await keyv.get(keys[0]!)).toBe("fenced again");
      await lease.release();
    });

    it("a lapsed lease writes nothing, whether its key was taken since or not; the new holder writes", async () => {
      if (cannotRun()) return;
      const { keyv, lock } = await open();
      const key = lockKey();
      const entryKey = `cm:${key}:head`;
      const stale = await fencedLease(lock, key, SHORT_LEASE_MS);
      expect(await stale.setIfHeld([{ key: entryKey, value: "first" }])).toBe(true);
      await sleep(PAST_SHORT_LEASE_MS);
      expect(
        await stale.setIfHeld([
          { key: entryKey, value: "lapsed, nobody took it" },
          { key: `${entryKey}:more`, value: "x" },
        ]),
      ).toBe(false);
      const current = await fencedLease(lock, key, 10_000);
      expect(await stale.setIfHeld([{ key: entryKey, value: "lapsed, taken" }])).toBe(false);
      expect(await keyv.get(entryKey)).toBe("first");
      expect(await keyv.get(`${entryKey}:more`)).toBeUndefined();
      expect(await current.setIfHeld([{ key: entryKey, value: "second" }])).toBe(true);
      expect(await keyv.get(entryKey)).toBe("second");
      await current.release();
      expect(await current.setIfHeld([{ key: entryKey, value: "after release" }])).toBe(false);
      expect(await keyv.get(entryKey)).toBe("second");
    });

    it("a put of the listing fenced by a lapsed lease lists nothing; by a live one it lists", async () => {
      if (cannotRun()) return;
      const storage = await open();
      if (!storage.index)
        throw new Error("a fenced store must hand its native listing to the suite (StorageUnderTest.index)");
      const index = storage.index.forRuntime(runtimeName());
      const key = lockKey();
      const stale = await fencedLease(storage.lock, key, SHORT_LEASE_MS);
      const row = { id: randomUUID(), status: "running" as const, createdAt: Date.now(), updatedAt: Date.now() };
      await index.put(row, undefined, { key, token: stale.token });
      expect(await index.list({ statuses: ["running"], limit: 10 })).toEqual([row]);
      await sleep(PAST_SHORT_LEASE_MS);
      await index.put({ ...row, status: "completed", updatedAt: row.updatedAt + 1 }, "running", {
        key,
        token: stale.token,
      });
      expect(await index.list({ limit: 10 })).toEqual([row]);
      const current = await fencedLease(storage.lock, key, 10_000);
      await index.put({ ...row, status: "error", updatedAt: row.updatedAt + 2 }, "running", {
        key,
        token: stale.token,
      });
      await index.put({ ...row, status: "paused", updatedAt: row.updatedAt + 3 }, "running", {
        key,
        token: current.token,
      });
      expect(await index.list({ limit: 10 })).toEqual([{ ...row, status: "paused", updatedAt: row.updatedAt + 3 }]);
      await current.release();
    });

    if (suite.options.dropLease) lostLeaseStory(suite, suite.options.dropLease);
  });
}

/** A lease taken without waiting that offers the fenced write; the story fails here if it does not. */
async function fencedLease(lock: LockProvider, key: string, ttlMs: number): Promise<FencedLease> {
  const lease = await takeLease(lock, key, ttlMs);
  expect(typeof lease.setIfHeld).toBe("function");
  return lease as FencedLease;
}
