import { createCodemodeRuntime, defineConnector } from "@codemode/core";
import type { ExecutionSummary } from "@codemode/core/operations";
import { createInProcessLock, createKeyvExecutionIndex, type LockProvider } from "@codemode/core/store";
import Keyv from "keyv";
import { describe, expect, it, vi } from "vitest";

/**
 * R-RT-4: listings are pages with a cursor, filtered by status, whose items are summaries; no
 * key and no lock is shared by every execution; a row that lags behind its head is set right
 * by the reader that meets it.
 */
const shop = defineConnector({
  name: "shop",
  tools: {
    read: { execute: async () => ({ ok: true }) },
    order: { requiresApproval: true, execute: async () => ({ orderId: "o-1" }) },
  },
});

const byNewest = (a: ExecutionSummary, b: ExecutionSummary) =>
  b.createdAt - a.createdAt || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);

describe("R-RT-4 listings", () => {
  it("pages executions newest first with a cursor, filters by status, and its items are summaries without a log", async () => {
    const runtime = createCodemodeRuntime({ connectors: [shop], maxExecutions: 1_000 });
    const ids = { paused: [] as string[], completed: [] as string[] };
    for (let index = 0; index < 120; index++) {
      const outcome = await runtime.execute({
        code: index % 3 === 0 ? "async () => shop.order({})" : "async () => shop.read({})",
      });
      (outcome.status === "paused" ? ids.paused : ids.completed).push(outcome.executionId);
    }
    expect([ids.paused.length, ids.completed.length]).toEqual([40, 80]);

    const pages: ExecutionSummary[][] = [];
    let cursor: string | undefined;
    do {
      const page = await runtime.executions({ limit: 50, ...(cursor ? { cursor } : {}) });
      pages.push(page.items);
      cursor = page.cursor;
    } while (cursor);
    expect(pages.map((page) => page.length)).toEqual([50, 50, 20]);
    const listed = pages.flat();
    expect(listed).toEqual([...listed].sort(byNewest));
    expect(new Set(listed.map((item) => item.id))).toEqual(new Set([...ids.paused, ...ids.completed]));
    for (const item of listed) expect("log" in item || "code" in item).toBe(false);
    expect(listed.find((item) => item.status === "paused")).toMatchObject({
      pendingSeq: 0,
      connectors: ["shop"],
      passes: 1,
    });

    const paused = await runtime.executions({ status: "paused", limit: 100 });
    expect(paused.items.map((item) => item.id).sort()).toEqual([...ids.paused].sort());
    expect(paused.cursor).toBeUndefined();
    const both = await runtime.executions({ status: ["paused", "completed"], limit: 1_000 });
    expect(both.items).toHaveLength(120);

    const first = await runtime.pending({ limit: 25 });
    const second = await runtime.pending({ limit: 25, cursor: first.cursor! });
    expect([first.items.length, second.items.length, second.cursor]).toEqual([25, 15, undefined]);
    expect(new Set([...first.items, ...second.items].map((action) => action.executionId))).toEqual(new Set(ids.paused));
    expect(first.items[0]).toMatchObject({ seq: 0, connector: "shop", method: "order", args: {} });
    expect((await runtime.pending(ids.completed[0]!)).items).toEqual([]);
    await runtime.close();
  });

  it("R-RE-1 retention with 32 executions at once: the next execution prunes to the newest maxExecutions (one prune at a time, none missed)", async () => {
    const runtime = createCodemodeRuntime({ connectors: [shop], maxExecutions: 5 });
    const outcomes = await Promise.all(
      Array.from({ length: 32 }, () => runtime.execute({ code: "async () => shop.read({})" })),
    );
    expect(outcomes.every((outcome) => outcome.status === "completed")).toBe(true);
    // Each prune ran while the others were still running (never pruned): all 32 are there.
    expect((await runtime.executions({ limit: 100 })).items).toHaveLength(32);
    const next = await runtime.execute({ code: "async () => shop.read({})" });
    // The next execution pruned the 32 down to the newest 5, then completed itself.
    const kept = (await runtime.executions({ limit: 100 })).items.map((item) => item.id);
    const newest = (
      await Promise.all(outcomes.map(async (outcome) => (await runtime.execution(outcome.executionId))?.id))
    ).filter(Boolean);
    expect(kept).toHaveLength(6);
    expect(kept).toContain(next.executionId);
    expect(newest).toHaveLength(5);
    await runtime.close();
  });

  it("refuses a cursor it did not make, a bad limit and an unknown status with a TypeError", async () => {
    const runtime = createCodemodeRuntime({ connectors: [shop] });
    await expect(runtime.executions({ cursor: "not-a-cursor" })).rejects.toThrow(TypeError);
    await expect(runtime.executions({ limit: 0 })).rejects.toThrow(/limit must be a whole number from 1 to 1,000/);
    await expect(runtime.executions({ status: "sleeping" as never })).rejects.toThrow(
      /status "sleeping" is not one of/,
    );
    await expect(runtime.pending({ cursor: Buffer.from("[1]").toString("base64url") })).rejects.toThrow(TypeError);
    await runtime.close();
  });
});

describe("R-RT-4 listings under concurrent and half-finished changes", () => {
  it("no lock and no key is shared by every execution: 64 executions, 16 at a time", async () => {
    const inner = createInProcessLock();
    const acquired = new Map<string, number>();
    const lock: LockProvider = {
      isHeld: (key) => inner.isHeld(key),
      acquire: (key, options) => {
        acquired.set(key, (acquired.get(key) ?? 0) + 1);
        return inner.acquire(key, options);
      },
    };
    const writes = new Map<string, number>();
    const keyv = new Keyv();
    const set = keyv.set.bind(keyv);
    const setMany = keyv.setMany.bind(keyv);
    keyv.set = ((key: string, value: unknown) => {
      writes.set(key, (writes.get(key) ?? 0) + 1);
      return set(key, value);
    }) as typeof keyv.set;
    keyv.setMany = ((entries: Array<{ key: string; value: unknown }>) => {
      for (const entry of entries) writes.set(entry.key, (writes.get(entry.key) ?? 0) + 1);
      return setMany(entries as never);
    }) as typeof keyv.setMany;
    const runtime = createCodemodeRuntime({
      connectors: [shop],
      storage: { keyv: keyv as never, lock },
      maxExecutions: 1_000,
    });
    const ids: string[] = [];
    for (let batch = 0; batch < 4; batch++) {
      const outcomes = await Promise.all(
        Array.from({ length: 16 }, () => runtime.execute({ code: "async () => shop.read({})" })),
      );
      for (const outcome of outcomes) {
        expect(outcome.status).toBe("completed");
        ids.push(outcome.executionId);
      }
    }
    await runtime.close();
    const shared = (counts: Map<string, number>) => [...counts].filter(([key]) => !ids.some((id) => key.includes(id)));
    // Each execution takes and writes its listing at least twice (running, then completed): a
    // key or lock every execution used would show 128 or more.
    const busiestLock = Math.max(...shared(acquired).map(([, count]) => count));
    const busiestKey = Math.max(...shared(writes).map(([, count]) => count));
    expect(busiestLock).toBeGreaterThan(0);
    expect(busiestLock).toBeLessThan(64);
    expect(busiestKey).toBeLessThan(64);
  });

  it("a row that lags behind its head (a change that crashed halfway) is set right by the listing that meets it", async () => {
    const keyv = new Keyv();
    const lock = createInProcessLock();
    const runtime = createCodemodeRuntime({ connectors: [shop], storage: { keyv: keyv as never, lock } });
    const paused = await runtime.execute({ code: "async () => shop.order({})" });
    const gone = await runtime.execute({ code: "async () => shop.read({})" });
    const record = await runtime.execution(paused.executionId);
    // The listing as a crash would leave it: the paused run listed as completed, and a row for a
    // run whose record is gone.
    const index = createKeyvExecutionIndex(keyv as never, "default", lock);
    await index.put(
      { id: paused.executionId, status: "completed", createdAt: record!.createdAt, updatedAt: record!.updatedAt },
      "paused",
    );
    await keyv.delete(`cm:default:h:${gone.executionId}`);

    // A row without a record may be a new execution still being written (it is listed first):
    // readers leave it while such a write could be under way, and skip it in their pages.
    expect((await runtime.executions({ status: "completed" })).items).toEqual([]);
    expect((await index.list({ limit: 10 })).map((row) => row.id).sort()).toEqual(
      [paused.executionId, gone.executionId].sort(),
    );
    // A minute on, no write can still be under way: the reader that meets the row drops it.
    const now = Date.now();
    vi.spyOn(Date, "now").mockImplementation(() => now + 61_000);
    expect((await runtime.executions({ status: "completed" })).items).toEqual([]);
    expect((await runtime.executions({ status: "paused" })).items.map((item) => item.id)).toEqual([paused.executionId]);
    expect((await runtime.pending()).items.map((action) => action.executionId)).toEqual([paused.executionId]);
    expect(await index.list({ limit: 10 })).toEqual([
      expect.objectContaining({ id: paused.executionId, status: "paused" }),
    ]);
    vi.restoreAllMocks();
    await runtime.close();
  });
});
