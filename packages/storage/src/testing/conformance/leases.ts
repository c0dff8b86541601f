import type { Lease } from "@codemode/core/store";
import { describe, expect, it } from "vitest";
import { sleep } from "../story-helpers.js";
import { lockKey, PAST_SHORT_LEASE_MS, SHORT_LEASE_MS, type StorageSuite, takeLease } from "./storage-suite.js";

/** Leases (R-ST-4): they exclude, wait, lapse, renew and release by token, across storages too. */
export function leaseStories(suite: StorageSuite): void {
  const { cannotRun, open } = suite;
  /** A storage's lock, and a key of it that no other story uses. */
  const openLock = async () => ({ lock: (await open()).lock, key: lockKey() });
  /** As `openLock`, with a lease on the key for `ttlMs` already taken. */
  const openLease = async (ttlMs: number) => {
    const { lock, key } = await openLock();
    return { lock, key, lease: await takeLease(lock, key, ttlMs) };
  };

  describe("leases (R-ST-4)", () => {
    it("one holder at a time: of ten racing acquires exactly one wins, and release frees the key", async () => {
      if (cannotRun()) return;
      const { lock, key } = await openLock();
      const leases = await Promise.all(
        Array.from({ length: 10 }, () => lock.acquire(key, { ttlMs: 10_000, waitMs: 0 })),
      );
      const winners = leases.filter((lease): lease is Lease => lease !== null);
      expect(winners).toHaveLength(1);
      expect(await lock.isHeld(key)).toBe(true);
      expect(await lock.acquire(key, { ttlMs: 10_000, waitMs: 0 })).toBeNull();
      await winners[0]!.release();
      expect(await lock.isHeld(key)).toBe(false);
      const next = await takeLease(lock, key, 10_000);
      expect(next.token).not.toBe(winners[0]!.token);
      await next.release();
    });

    it("a waiting acquire gets the key soon after the holder releases it, and gives up with null after waitMs", async () => {
      if (cannotRun()) return;
      const { lock, key, lease: holder } = await openLease(10_000);

      const started = Date.now();
      expect(await lock.acquire(key, { ttlMs: 10_000, waitMs: 200 })).toBeNull();
      expect(Date.now() - started).toBeGreaterThanOrEqual(190);

      const waiting = lock.acquire(key, { ttlMs: 10_000, waitMs: 5_000 });
      await sleep(150);
      await holder.release();
      const releasedAt = Date.now();
      const next = await waiting;
      expect(next).not.toBeNull();
      expect(Date.now() - releasedAt).toBeLessThan(1_000);
      await next!.release();
    });

    it("a lease lapses after its ttl: the key reads as free and another acquire wins", async () => {
      if (cannotRun()) return;
      const { lock, key } = await openLease(SHORT_LEASE_MS);
      expect(await lock.isHeld(key)).toBe(true);
      await sleep(PAST_SHORT_LEASE_MS);
      expect(await lock.isHeld(key)).toBe(false);
      const second = await takeLease(lock, key, 10_000);
      await second.release();
    });

    it("renew extends a live lease, and answers false once it lapsed — taken by another or not", async () => {
      if (cannotRun()) return;
      // Wide margins: on a loaded machine (a full test run) a sleep has overrun by more than 400 ms.
      const { lock, key, lease } = await openLease(2_000);
      await sleep(1_000);
      expect(await lease.renew(2_000)).toBe(true);
      await sleep(1_200);
      // 2.2 s after it was taken with a 2 s ttl: alive only because it was renewed.
      expect(await lock.isHeld(key)).toBe(true);
      expect(await lock.acquire(key, { ttlMs: 400, waitMs: 0 })).toBeNull();

      await sleep(1_000);
      expect(await lease.renew(10_000)).toBe(false);
      expect(await lock.isHeld(key)).toBe(false);

      const other = await takeLease(lock, key, 10_000);
      expect(await lease.renew(10_000)).toBe(false);
      expect(await other.renew(10_000)).toBe(true);
      await other.release();
    });

    it("release checks the token: a lapsed holder's release leaves the new holder's lease alone", async () => {
      if (cannotRun()) return;
      const { lock, key, lease: stale } = await openLease(200);
      await sleep(300);
      const current = await takeLease(lock, key, 10_000);
      await stale.release();
      expect(await lock.isHeld(key)).toBe(true);
      expect(await lock.acquire(key, { ttlMs: 10_000, waitMs: 0 })).toBeNull();
      expect(await current.renew(10_000)).toBe(true);
      await current.release();
      expect(await lock.isHeld(key)).toBe(false);
    });

    if (suite.shared) {
      it("two storages opened on the same backend exclude each other, as two processes would", async () => {
        if (cannotRun()) return;
        const first = await open();
        const second = await open();
        const key = lockKey();
        const [a, b] = await Promise.all([
          first.lock.acquire(key, { ttlMs: 10_000, waitMs: 0 }),
          second.lock.acquire(key, { ttlMs: 10_000, waitMs: 0 }),
        ]);
        expect([a, b].filter((lease) => lease !== null)).toHaveLength(1);
        const winner = (a ?? b)!;
        const loserLock = a ? second.lock : first.lock;
        expect(await loserLock.isHeld(key)).toBe(true);
        const waiting = loserLock.acquire(key, { ttlMs: 10_000, waitMs: 5_000 });
        await sleep(100);
        await winner.release();
        const taken = await waiting;
        expect(taken).not.toBeNull();
        expect(await winner.renew(10_000)).toBe(false);
        await taken!.release();
      });
    }
  });
}
