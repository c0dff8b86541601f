import Keyv from "keyv";
import { describe, expect, it, vi } from "vitest";
import { ALL_STATUSES, type IndexRow } from "./execution-index.js";
import { BASE, HOUR, putAll } from "./execution-index-fixtures.js";
import type { KeyvLike } from "./interface.js";
import { createKeyvExecutionIndex } from "./kv-execution-index.js";
import { createInProcessLock } from "./lock.js";

/** A Keyv that counts the round trips made to it, the keys read and the characters (keys and values) written. */
function countingKeyv() {
  const keyv = new Keyv();
  const counts = { roundTrips: 0, keysRead: 0, charactersWritten: 0 };
  const counted: KeyvLike = {
    store: keyv.store,
    get throwOnErrors() {
      return keyv.throwOnErrors;
    },
    set throwOnErrors(value) {
      keyv.throwOnErrors = value ?? false;
    },
    on: (event, listener) => keyv.on(event, listener),
    get: async (key) => {
      counts.roundTrips++;
      counts.keysRead++;
      return keyv.get(key);
    },
    set: async (key, value) => {
      counts.roundTrips++;
      counts.charactersWritten += key.length + String(value).length;
      return keyv.set(key, value);
    },
    delete: async (key) => {
      counts.roundTrips++;
      return keyv.delete(key);
    },
    getMany: async (keys) => {
      counts.roundTrips++;
      counts.keysRead += keys.length;
      return keyv.getMany(keys);
    },
    setMany: async (entries) => {
      counts.roundTrips++;
      for (const entry of entries) counts.charactersWritten += entry.key.length + String(entry.value).length;
      return keyv.setMany(entries);
    },
    deleteMany: async (keys) => {
      counts.roundTrips++;
      return keyv.deleteMany(keys);
    },
  };
  const measure = async (operation: () => Promise<unknown>) => {
    Object.assign(counts, { roundTrips: 0, keysRead: 0, charactersWritten: 0 });
    await operation();
    return { ...counts };
  };
  return { keyv: counted, measure };
}

describe("createKeyvExecutionIndex: cost does not grow with history", () => {
  // Now is three hours into a 256-minute span, so the newest page lies on the path read first.
  const now = Math.ceil(BASE / 15_360_000) * 15_360_000 + 3 * HOUR;

  /** An index holding `count` executions, one every 30 s up to now, in every status. */
  const withHistory = async (count: number) => {
    const { keyv, measure } = countingKeyv();
    const index = createKeyvExecutionIndex(keyv, "default", createInProcessLock());
    const rows = Array.from({ length: count }, (_, position): IndexRow => {
      const createdAt = now - (count - position) * 30_000;
      return {
        id: `exec-${position}`,
        status: ALL_STATUSES[position % ALL_STATUSES.length]!,
        createdAt,
        updatedAt: createdAt,
      };
    });
    await putAll(index, rows);
    const row: IndexRow = { id: "exec-new", status: "running", createdAt: now, updatedAt: now };
    return {
      put: await measure(() => index.put(row)),
      move: await measure(() => index.put({ ...row, status: "completed", updatedAt: now + 1 }, "running")),
      remove: await measure(() => index.remove({ ...row, status: "completed" })),
      firstPage: await measure(() => index.list({ limit: 50 })),
      deepPage: await measure(() => index.list({ limit: 50, after: rows[Math.floor(count / 2)]! })),
      oldestPage: await measure(() => index.list({ limit: 50, order: "oldest" })),
      count: await measure(() => index.count(ALL_STATUSES)),
    };
  };

  it("put, move, remove, list({ limit: 50 }) and count cost the same with 100 rows stored as with 10,000", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(now);
    try {
      const small = await withHistory(100);
      const large = await withHistory(10_000);
      for (const operation of ["put", "move", "remove", "firstPage", "count"] as const) {
        expect(large[operation].roundTrips, operation).toBe(small[operation].roundTrips);
      }
      expect(small.put.roundTrips).toBe(2);
      // The move empties the row's running page: one delete besides the read and the write.
      expect(small.move.roundTrips).toBe(3);
      expect(small.firstPage.roundTrips).toBe(2);
      expect(small.count.roundTrips).toBe(1);
      // Deeper or oldest-first pages descend the directories: at most one read per level.
      for (const page of [small.deepPage, large.deepPage, small.oldestPage, large.oldestPage])
        expect(page.roundTrips).toBeLessThanOrEqual(4);
      // Bytes: a write rewrites a page and at most three directories of at most 256 entries, so
      // they grow with history only until those directories fill (here 3×), then no more.
      for (const operation of ["put", "move", "remove"] as const) {
        expect(large[operation].charactersWritten, operation).toBeLessThanOrEqual(
          4 * small[operation].charactersWritten,
        );
        expect(large[operation].charactersWritten, operation).toBeLessThan(4_000);
      }
      // A page reads O(limit) pages, not the history: the same keys with 100 times the rows.
      expect(large.firstPage.keysRead).toBeLessThanOrEqual(small.firstPage.keysRead + 50);
    } finally {
      vi.useRealTimers();
    }
  }, 120_000);
});
