/**
 * Replay among concurrent calls: a pause lets the program go on as far as it can (R-AP-8, which
 * refines R-RP-6); calls not awaited still run and are logged (R-RP-7); Promise.all replays
 * calls that finish in another order on each pass (R-RP-8).
 */
import Keyv from "keyv";
import { describe, expect, it } from "vitest";
import { expectCompleted, expectPaused } from "./outcome-fixtures.ts";
import { closeRuntimesAfterEach, setup } from "./replay-fixtures.ts";

closeRuntimesAfterEach();

describe("a pause lets the program go on as far as it can (R-AP-8, which refines R-RP-6)", () => {
  it("R-AP-8: code that does not await the gated call and writes on: the write runs once, in the paused pass, and replays after approval", async () => {
    const { runtime, count, calls } = setup();
    const code = `async () => {
      const pending = shop.create_order({ sku: "a" });
      await shop.write({ n: 1 });
      return "went on";
    }`;
    const paused = expectPaused(await runtime.execute({ code }));
    expect(count("write")).toBe(1);
    expect(paused.calls!.map((entry) => [entry.seq, entry.method, entry.state])).toEqual([
      [0, "create_order", "pending"],
      [1, "write", "applied"],
    ]);
    const done = expectCompleted(await runtime.approve({ executionId: paused.executionId }));
    expect(done.result).toBe("went on");
    expect(count("write")).toBe(1);
    expect(count("create_order")).toBe(1);
    expect(calls.write![0]!.context.seq).toBe(1);
  });

  it("R-AP-8: code that races the gated call and returns early still pauses: the program never sees the gated call's result", async () => {
    const { runtime, count } = setup();
    const code = `async () => {
      try {
        await Promise.race([shop.create_order({ sku: "a" }), Promise.reject(new Error("skip"))]);
      } catch {}
      const later = shop.write({ n: 2 });
      later.catch(() => {});
      return "sneaky";
    }`;
    const paused = expectPaused(await runtime.execute({ code }));
    expect(paused.pending.map((action) => [action.seq, action.method])).toEqual([[0, "create_order"]]);
    expect(count("create_order")).toBe(0);
    expect(count("write")).toBe(1);
    expect((await runtime.execution(paused.executionId))?.status).toBe("paused");
    expectCompleted(await runtime.approve({ executionId: paused.executionId }));
    expect(count("create_order")).toBe(1);
    expect(count("write")).toBe(1);
  });

  it("R-AP-8: a call issued concurrently after the gated one in Promise.all runs in the paused pass, and replays after approval", async () => {
    const { runtime, count } = setup();
    const paused = expectPaused(
      await runtime.execute({
        code: `async () => Promise.all([shop.read({ n: 1 }), shop.create_order({ sku: "a" }), shop.write({ n: 3 })])`,
      }),
    );
    expect(count("read")).toBe(1);
    expect(count("write")).toBe(1);
    expect(paused.calls!.map((entry) => [entry.seq, entry.state])).toEqual([
      [0, "applied"],
      [1, "pending"],
      [2, "applied"],
    ]);
    const done = expectCompleted(await runtime.approve({ executionId: paused.executionId }));
    expect(done.result).toEqual([{ n: 1, value: 10 }, { orderId: "o-1" }, { written: 3 }]);
    expect(count("read")).toBe(1);
    expect(count("write")).toBe(1);
  });

  it("R-AP-8: with a slow store, calls issued while the pause is recorded and after a timer run once, and nothing that awaits the gated call runs", async () => {
    const entries = new Map<string, unknown>();
    const slowStore = {
      get: async (key: string) => entries.get(key),
      set: async (key: string, value: unknown) => {
        await new Promise((resolve) => setTimeout(resolve, 15));
        entries.set(key, value);
        return true;
      },
      delete: async (key: string) => entries.delete(key),
      clear: async () => entries.clear(),
    };
    const { runtime, count } = setup({ storage: new Keyv({ store: slowStore }) });
    const paused = expectPaused(
      await runtime.execute({
        code: `async () => {
          const order = shop.create_order({ sku: "a" });
          const writes = [shop.write({ n: 1 }), shop.write({ n: 2 })];
          await new Promise((resolve) => setTimeout(resolve, 5));
          const late = shop.write({ n: 3 });
          const all = await Promise.all([order, ...writes, late]);
          await shop.write({ n: 4 });
          return all;
        }`,
      }),
    );
    expect(count("write")).toBe(3);
    expect(paused.calls!.map((entry) => [entry.seq, entry.method, entry.state])).toEqual([
      [0, "create_order", "pending"],
      [1, "write", "applied"],
      [2, "write", "applied"],
      [3, "write", "applied"],
    ]);
    const done = expectCompleted(await runtime.approve({ executionId: paused.executionId }));
    expect(done.result).toEqual([{ orderId: "o-1" }, { written: 1 }, { written: 2 }, { written: 3 }]);
    expect(count("write")).toBe(4);
  });
});

describe("unawaited calls (R-RP-7)", () => {
  it("R-RP-7: calls started and not awaited before return still run to completion and are logged", async () => {
    const { runtime, count } = setup();
    const outcome = expectCompleted(
      await runtime.execute({
        code: `async () => {
          shop.write({ n: 1, delayMs: 40 });
          shop.write({ n: 2, delayMs: 10 });
          return "returned early";
        }`,
      }),
    );
    expect(outcome.result).toBe("returned early");
    expect(count("write")).toBe(2);
    expect(outcome.calls!.map((entry) => [entry.seq, entry.state, entry.result])).toEqual([
      [0, "applied", { written: 1 }],
      [1, "applied", { written: 2 }],
    ]);
    const stored = await runtime.execution(outcome.executionId);
    expect(stored?.log.map((entry) => entry.state)).toEqual(["applied", "applied"]);
  });
});

describe("Promise.all replays (R-RP-8)", () => {
  it("R-RP-8: five concurrent calls that finish in another order on each pass replay without divergence, results in place", async () => {
    const { runtime, count, calls } = setup();
    const paused = expectPaused(
      await runtime.execute({
        code: `async () => {
          const recorded = await Promise.all([1, 2, 3, 4, 5].map((n) => shop.jittery({ n })));
          const live = await Promise.all([1, 2, 3, 4, 5].map((n) => shop.jittery_live({ n })));
          const order = await shop.create_order({ recorded, live });
          return { recorded, live, order };
        }`,
      }),
    );
    // On the first pass the calls finished last-issued first; their seqs are still issue order.
    expect(calls.jittery!.map((call) => call.context.seq)).toEqual([0, 1, 2, 3, 4]);
    expect(paused.calls!.slice(0, 5).map((entry) => entry.args)).toEqual([
      { n: 1 },
      { n: 2 },
      { n: 3 },
      { n: 4 },
      { n: 5 },
    ]);
    expect(paused.pending[0]!.seq).toBe(10);
    const done = expectCompleted(await runtime.approve({ executionId: paused.executionId }));
    expect(done.result).toEqual({
      recorded: [100, 200, 300, 400, 500],
      live: [1000, 2000, 3000, 4000, 5000],
      order: { orderId: "o-1" },
    });
    expect(count("jittery")).toBe(5);
    expect(count("jittery_live")).toBe(10);
    expect(calls.jittery_live!.slice(5).map((call) => [call.context.seq, (call.args as { n: number }).n])).toEqual([
      [5, 1],
      [6, 2],
      [7, 3],
      [8, 4],
      [9, 5],
    ]);
  });
});
