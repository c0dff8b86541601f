/**
 * R-RP-2, `runtime.replayCheck`: stored runs checked against changed tools without calling one,
 * and `REPLAY_DIVERGENCE` outcomes that carry the diff, recorded against now. On memory, SQLite,
 * Redis and PostgreSQL (the last two fail in CI when the service is missing, skip elsewhere).
 */
import { randomUUID } from "node:crypto";
import { createCodemodeRuntime, defineConnector } from "@codemode/core";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { closedAfterEach, expectStatus, STORES, type Store, serviceCheck } from "./four-stores-fixtures.ts";

/** The shop as it was when the runs paused, and as it is after a change; `calls` counts every real call. */
function shopConnector(version: "before" | "renamed-field" | "renamed-method", calls: string[]) {
  const order = {
    requiresApproval: true,
    inputSchema:
      version === "renamed-field"
        ? z.object({ sku: z.string(), count: z.number() })
        : z.object({ sku: z.string(), quantity: z.number() }),
    execute: async (args: unknown) => {
      calls.push(`order ${JSON.stringify(args)}`);
      return { orderId: "o-1" };
    },
  };
  return defineConnector({
    name: "shop",
    tools: {
      search: {
        readOnly: true,
        execute: async () => {
          calls.push("search");
          return [{ sku: "mug" }];
        },
      },
      ...(version === "renamed-method" ? { place_order: order } : { create_order: order }),
    },
  });
}

const PAUSING_CODE = `async () => {
  const [mug] = await shop.search({ query: "mug" });
  return shop.create_order({ sku: mug.sku, quantity: 2 });
}`;

/**
 * Within a store's describe: what a test opened (`opened`), closed after it, and `runtimes` over
 * one store per test.
 */
function useStoreRuntimes(store: Store) {
  const opened = closedAfterEach();
  /** One store, and runtimes over it as an application before and after a deploy would be. */
  function runtimes() {
    const storage = store.open(`codemode-replay-check-${randomUUID().slice(0, 8)}`);
    opened.push(storage);
    return (version: "before" | "renamed-field" | "renamed-method", calls: string[], deterministic = true) => {
      const runtime = createCodemodeRuntime({ connectors: [shopConnector(version, calls)], storage, deterministic });
      opened.unshift(runtime);
      return runtime;
    };
  }
  return { opened, runtimes };
}

for (const store of STORES) {
  describe(`runtime.replayCheck on ${store.name}`, () => {
    const cannotRun = serviceCheck(store);
    const { runtimes } = useStoreRuntimes(store);

    it("R-RP-2: after a schema change, names each affected paused run with the schema's refusal; no tool is called and the store is unchanged", async () => {
      if (cannotRun()) return;
      const make = runtimes();
      const before = make("before", []);
      const first = await before.execute({ code: PAUSING_CODE });
      const second = await before.execute({ code: PAUSING_CODE });
      expectStatus(first, "paused");
      expectStatus(second, "paused");
      const stored = await before.execution(first.executionId);

      const calls: string[] = [];
      const after = make("renamed-field", calls);
      const report = await after.replayCheck({ status: "paused" });
      expect(report.ok).toBe(false);
      expect(report.results.map((result) => result.executionId).sort()).toEqual(
        [first.executionId, second.executionId].sort(),
      );
      for (const result of report.results) {
        expect(result).toMatchObject({
          ok: false,
          status: "paused",
          stoppedAt: "divergence",
          divergence: {
            seq: 1,
            kind: "schema",
            recorded: { connector: "shop", method: "create_order", args: { sku: "mug", quantity: 2 } },
          },
        });
        expect(result.divergence?.schemaError).toMatch(/count/);
        expect(result.divergence?.message).toMatch(/seq 1.*schema of shop\.create_order/);
      }
      expect(calls).toEqual([]);
      expect(await after.execution(first.executionId)).toEqual(stored);

      // The check changed nothing: the application as it was still approves and completes the run.
      const approved = await before.approve({ executionId: first.executionId });
      expectStatus(approved, "completed");
    });

    it("R-RP-2: a renamed method is a missing tool at its seq; the unchanged tools check ok up to the pending call", async () => {
      if (cannotRun()) return;
      const make = runtimes();
      const before = make("before", []);
      const paused = await before.execute({ code: PAUSING_CODE });
      expectStatus(paused, "paused");

      const calls: string[] = [];
      const same = await make("before", calls).replayCheck(paused.executionId);
      expect(same).toEqual({
        ok: true,
        results: [{ executionId: paused.executionId, status: "paused", ok: true, replayed: 1, stoppedAt: "frontier" }],
      });
      const renamed = await make("renamed-method", calls).replayCheck(paused.executionId);
      expect(renamed.results[0]).toMatchObject({
        ok: false,
        stoppedAt: "divergence",
        divergence: { seq: 1, kind: "missing-tool", recorded: { connector: "shop", method: "create_order" } },
      });
      expect(calls).toEqual([]);
    });

    it("R-RP-2: a completed run replays to its end; since and limit pick the runs; an unknown id is NOT_FOUND", async () => {
      if (cannotRun()) return;
      const make = runtimes();
      const runtime = make("before", []);
      const paused = await runtime.execute({ code: PAUSING_CODE });
      expectStatus(paused, "paused");
      const completed = await runtime.approve({ executionId: paused.executionId });
      expectStatus(completed, "completed");

      const calls: string[] = [];
      const checker = make("before", calls);
      const report = await checker.replayCheck({ status: "completed" });
      expect(report.results).toEqual([
        { executionId: paused.executionId, status: "completed", ok: true, replayed: 2, stoppedAt: "end" },
      ]);
      expect((await checker.replayCheck({ status: "completed", since: Date.now() + 60_000 })).results).toEqual([]);
      const unknown = await checker.replayCheck("no-such-run");
      expect(unknown).toMatchObject({
        ok: false,
        results: [{ executionId: "no-such-run", ok: false, error: { code: "NOT_FOUND" } }],
      });
      expect(calls).toEqual([]);
    });

    it("R-RP-2: a run that diverges on approval gives REPLAY_DIVERGENCE with the argument diff, and replayCheck finds the same", async () => {
      if (cannotRun()) return;
      // Real randomness: the program's arguments change on every pass, which replay must catch.
      const runtime = runtimes()("before", [], false);
      const paused = await runtime.execute({
        code: "async () => shop.create_order({ sku: 'mug', quantity: 1 + Math.floor(Math.random() * 1e9) })",
      });
      expectStatus(paused, "paused");
      const checked = await runtime.replayCheck(paused.executionId);
      expect(checked.results[0]).toMatchObject({
        ok: false,
        divergence: { seq: 0, kind: "arguments", argumentDiff: [{ path: ".quantity" }] },
      });
      const approved = await runtime.approve({ executionId: paused.executionId });
      expectStatus(approved, "error");
      expect(approved.code).toBe("REPLAY_DIVERGENCE");
      expect(approved.divergence).toMatchObject({
        seq: 0,
        kind: "arguments",
        recorded: { connector: "shop", method: "create_order", args: { sku: "mug" } },
        now: { connector: "shop", method: "create_order", args: { sku: "mug" } },
        argumentDiff: [{ path: ".quantity", recorded: expect.any(Number), now: expect.any(Number) }],
      });
      expect(approved.error).toContain("first at .quantity");
      // The record keeps it: a process that did not run the pass reads the same divergence.
      expect((await runtime.outcome(paused.executionId)) as unknown).toMatchObject({
        code: "REPLAY_DIVERGENCE",
        divergence: approved.divergence,
      });
      expect((await runtime.execution(paused.executionId))?.divergence).toEqual(approved.divergence);
    });
  });

  describe(`runtime.fork on ${store.name}`, () => {
    const cannotRun = serviceCheck(store);
    const { opened, runtimes } = useStoreRuntimes(store);

    it("runtime.fork: a fork from seq 3 of a completed run replays seqs 0-2 and runs seq 3 on live; the original is untouched", async () => {
      if (cannotRun()) return;
      const storage = store.open(`codemode-fork-${randomUUID().slice(0, 8)}`);
      opened.push(storage);
      const written: number[] = [];
      const ledger = defineConnector({
        name: "ledger",
        tools: {
          write: {
            execute: async (args: { n: number }) => {
              written.push(args.n);
              return { n: args.n, at: written.length };
            },
          },
        },
      });
      const runtime = createCodemodeRuntime({ connectors: [ledger], storage });
      opened.unshift(runtime);
      const code =
        "async () => { const out = []; for (let n = 0; n < 5; n++) out.push(await ledger.write({ n })); return out; }";
      const original = await runtime.execute({ code });
      expectStatus(original, "completed");
      expect(written).toEqual([0, 1, 2, 3, 4]);
      const before = await runtime.execution(original.executionId);

      const forked = await runtime.fork({ executionId: original.executionId, fromSeq: 3 });
      expectStatus(forked, "completed");
      expect(forked.executionId).not.toBe(original.executionId);
      expect(written).toEqual([0, 1, 2, 3, 4, 3, 4]);
      // Seqs 0-2 are the original's results, replayed; 3 and 4 ran again.
      expect(forked.result).toEqual([
        { n: 0, at: 1 },
        { n: 1, at: 2 },
        { n: 2, at: 3 },
        { n: 3, at: 6 },
        { n: 4, at: 7 },
      ]);
      const state = await runtime.execution(forked.executionId);
      expect(state?.forkedFrom).toEqual({ executionId: original.executionId, fromSeq: 3 });
      expect(state?.log.map((entry) => entry.seq)).toEqual([0, 1, 2, 3, 4]);
      expect(await runtime.execution(original.executionId)).toEqual(before);

      // New code from a seq: the prefix replays, the rest is the new program's.
      const changed = await runtime.fork({
        executionId: original.executionId,
        fromSeq: 2,
        code: "async () => { const a = await ledger.write({ n: 0 }); const b = await ledger.write({ n: 1 }); return [a.at, b.at, (await ledger.write({ n: 99 })).n]; }",
      });
      expectStatus(changed, "completed");
      expect(changed.result).toEqual([1, 2, 99]);
      expect(written.slice(-1)).toEqual([99]);
    });

    it("runtime.fork: a pending approval before fromSeq is asked again; unknown runs and seqs it cannot start from are outcomes", async () => {
      if (cannotRun()) return;
      const calls: string[] = [];
      const runtime = runtimes()("before", calls);
      const paused = await runtime.execute({ code: PAUSING_CODE });
      expectStatus(paused, "paused");
      const approved = await runtime.approve({ executionId: paused.executionId });
      expectStatus(approved, "completed");

      // The approval belonged to the original: the fork pauses at the same call and asks again.
      expect(await runtime.fork({ executionId: paused.executionId, fromSeq: 3 })).toMatchObject({
        status: "error",
        code: "NOT_FOUND",
        error: expect.stringContaining("beyond the log"),
      });
      // From the log's end, the whole record replays (the approved order included) and nothing runs.
      expectStatus(await runtime.fork({ executionId: paused.executionId, fromSeq: 2 }), "completed");
      expect(calls).toEqual(["search", 'order {"sku":"mug","quantity":2}']);
      const again = await runtime.fork({ executionId: paused.executionId, fromSeq: 1 });
      expectStatus(again, "paused");
      expect(again.pending).toMatchObject([{ seq: 1, connector: "shop", method: "create_order" }]);

      expect(await runtime.fork({ executionId: "no-such-run", fromSeq: 0 })).toMatchObject({
        status: "error",
        code: "NOT_FOUND",
      });
      await expect(runtime.fork({ executionId: paused.executionId, fromSeq: -1 })).rejects.toThrow(
        /fromSeq must be an integer/,
      );
    });
  });
}

describe("runtime.replayCheck refuses a query it cannot read (store outages: outages.test.ts)", () => {
  it("a query it cannot read is a TypeError that says what it takes", async () => {
    const runtime = createCodemodeRuntime({});
    try {
      await expect(runtime.replayCheck({ limit: 0 })).rejects.toThrow(/limit must be an integer from 1 to 1000/);
      await expect(runtime.replayCheck({ status: "done" as never })).rejects.toThrow(/status must be one of/);
      await expect(runtime.replayCheck({ since: Number.NaN })).rejects.toThrow(/since must be a time/);
    } finally {
      await runtime.close();
    }
  });
});
