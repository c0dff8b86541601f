import Keyv from "keyv";
import { describe, expect, it } from "vitest";
import { CodemodeError, type ExecutionStatus } from "../outcome.js";
import { ALL_STATUSES, type IndexRow } from "./execution-index.js";
import { BASE, expectedPage, indexKeys, putAll } from "./execution-index-fixtures.js";
import { storeKeys } from "./keys.js";
import { createKeyvExecutionIndex } from "./kv-execution-index.js";
import { createInProcessLock, type LockProvider } from "./lock.js";

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
