import Keyv from "keyv";
import { describe, expect, it, vi } from "vitest";
import { CodemodeError, type ExecutionStatus } from "../outcome.js";
import { ALL_STATUSES, compareRows, type ExecutionIndex, type IndexQuery, type IndexRow } from "./execution-index.js";
import type { KeyvLike } from "./execution-store.js";
import { storeKeys } from "./keys.js";
import { createKeyvExecutionIndex } from "./kv-execution-index.js";
import { createInProcessLock, type LockProvider } from "./lock.js";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const BASE = Date.UTC(2025, 0, 1);

/** A seeded generator, so a failing listing can be replayed. */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let value = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    value = (value + Math.imul(value ^ (value >>> 7), 61 | value)) ^ value;
    return ((value ^ (value >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/**
 * Rows over six hours, a tenth of them over a hundred days; every fifth shares its neighbour's
 * millisecond, and some sit on the first or last millisecond of a minute, where pages meet.
 */
function spreadRows(count: number, seed: number): IndexRow[] {
  const next = random(seed);
  const rows: IndexRow[] = [];
  for (let index = 0; index < count; index++) {
    const spread = next() < 0.1 ? 100 * DAY : 6 * HOUR;
    let createdAt = index % 5 === 4 ? rows[index - 1]!.createdAt : BASE + Math.floor(next() * spread);
    if (index % 7 === 0) createdAt -= createdAt % 60_000;
    if (index % 11 === 0) createdAt -= (createdAt % 60_000) + 1;
    const status = ALL_STATUSES[Math.floor(next() * ALL_STATUSES.length)]!;
    rows.push({
      id: `exec-${index.toString(36)}-${Math.floor(next() * 1e6)}`,
      status,
      createdAt,
      updatedAt: createdAt + 5,
    });
  }
  return rows;
}

/** What a page must be, computed from every row at once. */
function expectedPage(rows: IndexRow[], query: IndexQuery): IndexRow[] {
  const direction = query.order === "oldest" ? 1 : -1;
  return rows
    .filter((row) => (query.statuses ?? ALL_STATUSES).includes(row.status))
    .filter((row) => query.after === undefined || direction * compareRows(row, query.after) > 0)
    .sort((a, b) => direction * compareRows(a, b))
    .slice(0, query.limit);
}

/** Follows the cursor page by page, checking each page against the expected one; answers every row seen. */
async function pageThrough(
  index: ExecutionIndex,
  rows: IndexRow[],
  query: Omit<IndexQuery, "after">,
): Promise<IndexRow[]> {
  const seen: IndexRow[] = [];
  let after: IndexQuery["after"];
  for (;;) {
    const page = await index.list({ ...query, after });
    expect(page).toEqual(expectedPage(rows, { ...query, after }));
    seen.push(...page);
    if (page.length < query.limit) return seen;
    after = { createdAt: page.at(-1)!.createdAt, id: page.at(-1)!.id };
  }
}

async function putAll(index: ExecutionIndex, rows: IndexRow[]): Promise<void> {
  for (let start = 0; start < rows.length; start += 200)
    await Promise.all(rows.slice(start, start + 200).map((row) => index.put(row)));
}

function indexKeys(keyv: Keyv): string[] {
  return [...(keyv.store as Map<string, unknown>).keys()].filter((key) => key.includes(":x:"));
}

describe("createKeyvExecutionIndex: listing", () => {
  const rows = spreadRows(500, 7);
  const setUp = async () => {
    const index = createKeyvExecutionIndex(new Keyv(), "default", createInProcessLock());
    await putAll(index, rows);
    return index;
  };

  it("pages through 500 rows over a hundred days, newest first and oldest first, each page exactly after its cursor", async () => {
    const index = await setUp();
    const newest = await pageThrough(index, rows, { limit: 37 });
    expect(newest).toHaveLength(500);
    const oldest = await pageThrough(index, rows, { limit: 50, order: "oldest" });
    expect(oldest).toEqual([...newest].reverse());
    // Rows sharing a millisecond are split across pages by id, none lost or repeated.
    expect(await pageThrough(index, rows, { limit: 1, order: "oldest" })).toEqual(oldest);
  });

  it("filters by one status, several, or all, and counts what it lists", async () => {
    const index = await setUp();
    for (const statuses of [["paused"], ["completed", "error", "rolled_back"], ALL_STATUSES] as ExecutionStatus[][]) {
      const listed = await pageThrough(index, rows, { statuses, limit: 23, order: "oldest" });
      expect(listed.length).toBe(rows.filter((row) => statuses.includes(row.status)).length);
      expect(await index.count(statuses)).toBe(listed.length);
    }
    expect(await index.count([])).toBe(0);
    expect(await index.list({ statuses: [], limit: 10 })).toEqual([]);
    expect(await index.list({ limit: 0 })).toEqual([]);
  });

  it("a page after a cursor that was removed still starts right after it", async () => {
    const index = await setUp();
    const cursor = expectedPage(rows, { limit: 100 }).at(-1)!;
    await index.remove(cursor);
    const remaining = rows.filter((row) => row.id !== cursor.id);
    expect(await index.list({ limit: 30, after: cursor })).toEqual(
      expectedPage(remaining, { limit: 30, after: cursor }),
    );
    expect(await index.list({ limit: 30, after: cursor, order: "oldest" })).toEqual(
      expectedPage(remaining, { limit: 30, after: cursor, order: "oldest" }),
    );
  });
});

describe("createKeyvExecutionIndex: writes", () => {
  const row: IndexRow = { id: "exec-1", status: "running", createdAt: BASE, updatedAt: BASE };

  it("a move lists the execution under its new status only; put and remove are idempotent; nothing is left behind", async () => {
    const keyv = new Keyv();
    const index = createKeyvExecutionIndex(keyv, "default", createInProcessLock());
    await index.put(row);
    await index.put(row);
    expect(await index.list({ limit: 10 })).toEqual([row]);

    const paused = { ...row, status: "paused" as const, updatedAt: BASE + 10 };
    await index.put(paused, "running");
    await index.put(paused, "running");
    expect(await index.list({ limit: 10 })).toEqual([paused]);
    expect(await index.count(["running"])).toBe(0);

    // A previous status it was never listed under is harmless.
    const completed = { ...row, status: "completed" as const, updatedAt: BASE + 20 };
    await index.put(completed, "paused");
    await index.put(completed, "error");
    expect(await index.list({ statuses: ALL_STATUSES, limit: 10 })).toEqual([completed]);

    await index.remove(completed);
    await index.remove(completed);
    expect(await index.list({ limit: 10 })).toEqual([]);
    expect(await index.count(ALL_STATUSES)).toBe(0);
    expect(indexKeys(keyv)).toEqual([]);
  });

  it("keeps the listings of two runtime names sharing a store apart", async () => {
    const keyv = new Keyv();
    const lock = createInProcessLock();
    const first = createKeyvExecutionIndex(keyv, "first", lock);
    const second = createKeyvExecutionIndex(keyv, "second", lock);
    await first.put(row);
    await second.put({ ...row, id: "exec-2", status: "paused" });
    expect(await first.list({ limit: 10 })).toEqual([row]);
    expect(await second.list({ limit: 10 })).toEqual([{ ...row, id: "exec-2", status: "paused" }]);
    expect(await second.count(["running"])).toBe(0);
    await second.remove({ ...row, id: "exec-1" });
    expect(await first.count(["running"])).toBe(1);
    expect(
      indexKeys(keyv).every((key) => key.startsWith("keyv:cm:first:x:") || key.startsWith("keyv:cm:second:x:")),
    ).toBe(true);
  });

  it("counts left wrong by a crash mid-write never hide rows, and the next write on the path repairs them", async () => {
    const keyv = new Keyv();
    const index = createKeyvExecutionIndex(keyv, "default", createInProcessLock());
    const rows = [0, 1, 2, 3, 4].map(
      (minute): IndexRow => ({
        id: `exec-${minute}`,
        status: "running",
        createdAt: BASE + minute * 60_000,
        updatedAt: BASE,
      }),
    );
    await putAll(index, rows);
    for (const key of indexKeys(keyv).filter((key) => /:x:running:\d+(:[12]:\d+)?$/.test(key))) {
      const name = key.slice("keyv:".length);
      const counts = JSON.parse(String(await keyv.get(name))) as Record<string, number>;
      await keyv.set(name, JSON.stringify(Object.fromEntries(Object.keys(counts).map((child) => [child, 7]))));
    }
    expect(await index.list({ limit: 3 })).toEqual(expectedPage(rows, { limit: 3 }));
    expect(await index.list({ limit: 3, order: "oldest" })).toEqual(expectedPage(rows, { limit: 3, order: "oldest" }));
    expect(await index.count(["running"])).toBeGreaterThan(5);
    await putAll(index, rows);
    expect(await index.count(["running"])).toBe(5);
  });

  it("keys stay short whatever the ids: ids live in values, never in keys", async () => {
    const keyv = new Keyv();
    const index = createKeyvExecutionIndex(keyv, "default", createInProcessLock());
    await index.put({ ...row, id: "x".repeat(500) });
    expect(Math.max(...indexKeys(keyv).map((key) => key.length))).toBeLessThan(60);
  });
});

describe("createKeyvExecutionIndex: concurrency", () => {
  /** 50 executions created in the same minute: their rows share pages and directories. */
  const rows = Array.from(
    { length: 50 },
    (_, position): IndexRow => ({
      id: `exec-${position}`,
      status: "running",
      createdAt: BASE + position,
      updatedAt: BASE + position,
    }),
  );
  const moved = rows.map((row, position) => ({
    ...row,
    status: (position % 2 === 0 ? "completed" : "paused") as ExecutionStatus,
    updatedAt: row.updatedAt + 1,
  }));

  it("50 concurrent puts, then 50 concurrent moves, leave exactly the right rows", async () => {
    const index = createKeyvExecutionIndex(new Keyv(), "default", createInProcessLock());
    await Promise.all(rows.map((row) => index.put(row)));
    expect(await index.list({ limit: 100 })).toEqual(expectedPage(rows, { limit: 100 }));
    await Promise.all(moved.map((row) => index.put(row, "running")));
    expect(await index.list({ limit: 100 })).toEqual(expectedPage(moved, { limit: 100 }));
    expect(await index.count(["running"])).toBe(0);
    expect(await index.count(["completed", "paused"])).toBe(50);
  });

  it("the leases are what keep them: with a lock that excludes no one, the same puts lose rows", async () => {
    const lease = { token: "", renew: async () => true, release: async () => {} };
    const noLock: LockProvider = { acquire: async () => lease, isHeld: async () => false };
    const index = createKeyvExecutionIndex(new Keyv(), "default", noLock);
    await Promise.all(rows.map((row) => index.put(row)));
    expect((await index.list({ limit: 100 })).length).toBeLessThan(50);
  });

  it("BUSY when a list's lease stays taken past lockWaitMs", async () => {
    const lock = createInProcessLock();
    const keys = storeKeys("default");
    for (let shard = 0; shard < 16; shard++)
      await lock.acquire(keys.indexListLock("running", shard), { ttlMs: 60_000, waitMs: 0 });
    const index = createKeyvExecutionIndex(new Keyv(), "default", lock, { lockWaitMs: 20 });
    const error = await index.put(rows[0]!).catch((caught: unknown) => caught);
    expect(CodemodeError.isInstance(error) && error.code).toBe("BUSY");
    // Other lists are not held by it.
    await index.put({ ...rows[0]!, status: "paused" });
    expect(await index.count(["paused"])).toBe(1);
  });
});

describe("createKeyvExecutionIndex: a failing store", () => {
  const failing = () => {
    throw new Error("connection refused");
  };
  const code = (promise: Promise<unknown>) =>
    promise.then(
      () => "resolved",
      (error: unknown) => (CodemodeError.isInstance(error) ? error.code : "other error"),
    );

  it("over a Keyv whose adapter fails, every operation rejects with STORAGE_ERROR, never an empty page", async () => {
    // Keyv swallows adapter errors by default: the index must switch that off, or this would list nothing.
    const keyv = new Keyv({ store: { get: failing, set: failing, delete: failing, clear: failing } });
    const index = createKeyvExecutionIndex(keyv, "default", createInProcessLock());
    expect(await code(index.list({ limit: 10 }))).toBe("STORAGE_ERROR");
    expect(await code(index.list({ limit: 10, order: "oldest" }))).toBe("STORAGE_ERROR");
    expect(await code(index.count(["running"]))).toBe("STORAGE_ERROR");
    expect(await code(index.put({ id: "a", status: "running", createdAt: BASE, updatedAt: BASE }))).toBe(
      "STORAGE_ERROR",
    );
    expect(await code(index.remove({ id: "a", status: "running", createdAt: BASE }))).toBe("STORAGE_ERROR");
  });

  it("a store whose reads work but whose writes fail rejects the put with STORAGE_ERROR", async () => {
    const map = new Map<string, unknown>();
    const keyv = new Keyv({
      store: { get: async (key: string) => map.get(key), set: failing, delete: failing, clear: failing },
    });
    const index = createKeyvExecutionIndex(keyv, "default", createInProcessLock());
    expect(await code(index.put({ id: "a", status: "running", createdAt: BASE, updatedAt: BASE }))).toBe(
      "STORAGE_ERROR",
    );
  });

  it("a batched read that fails, or returns something that is not an index, is STORAGE_ERROR", async () => {
    const keyv: KeyvLike = {
      get: async () => undefined,
      set: async () => true,
      delete: async () => true,
      getMany: async () => Promise.reject(new Error("timeout")),
    };
    expect(await code(createKeyvExecutionIndex(keyv, "default", createInProcessLock()).list({ limit: 5 }))).toBe(
      "STORAGE_ERROR",
    );
    const garbled: KeyvLike = { ...keyv, getMany: async (keys) => keys.map(() => "{not json") };
    expect(await code(createKeyvExecutionIndex(garbled, "default", createInProcessLock()).count(["running"]))).toBe(
      "STORAGE_ERROR",
    );
  });
});

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
