/**
 * Approval stories (R-AP-*): gated calls pause, people approve or reject, nothing runs twice.
 * This file: pause and approve (R-AP-1, R-AP-2) and missing connectors (R-AP-5). What approve
 * and reject refuse is in approvals-reject.test.ts, concurrent decisions in
 * approvals-concurrent.test.ts, outcomes and configuration errors in approvals-outcomes.test.ts.
 */
import { createCodemodeRuntime } from "@codemode/core";
import { describe, expect, it } from "vitest";
import { closeRuntimesAfterEach, ORDER_CODE, setup, track } from "./approvals-fixtures.ts";
import { expectCompleted, expectError, expectPaused } from "./outcome-fixtures.ts";

closeRuntimesAfterEach();

describe("pause and approve (R-AP-1, R-AP-2)", () => {
  it("R-AP-1 R-AP-2: pauses at create_order, approve, completes with the order id", async () => {
    const { runtime, count, calls, keyv } = setup();
    const paused = expectPaused(await runtime.execute({ code: ORDER_CODE }));
    const executionId = paused.executionId;
    // With what a person needs to decide: the tool's description and input schema (for an edit form).
    expect(paused.pending).toEqual([
      {
        executionId,
        seq: 1,
        pauseId: "1.1",
        connector: "shop",
        method: "create_order",
        args: { item: 1 },
        description: "Places an order for an item.",
        inputSchema: { type: "object", properties: { item: { type: "number" } }, required: ["item"] },
      },
    ]);
    expect(count("create_order")).toBe(0);
    expect(paused.calls!.map((entry) => [entry.seq, entry.method, entry.state, entry.requiresApproval])).toEqual([
      [0, "list_items", "applied", false],
      [1, "create_order", "pending", true],
    ]);
    expect((await runtime.pending(executionId)).items).toEqual(paused.pending);
    expect((await runtime.pending()).items).toEqual(paused.pending);
    expect(await runtime.outcome(executionId)).toMatchObject({ pending: paused.pending });
    // A runtime without the tool (another process's config) still lists the action, without them.
    const bare = track(createCodemodeRuntime({ storage: keyv }));
    expect((await bare.pending()).items).toEqual([
      { executionId, seq: 1, connector: "shop", method: "create_order", args: { item: 1 }, pauseId: "1.1" },
    ]);
    expect((await runtime.execution(executionId))?.status).toBe("paused");

    const done = expectCompleted(await runtime.approve({ executionId }));
    expect(done.executionId).toBe(executionId);
    expect(done.result).toBe("o-1");
    expect(count("create_order")).toBe(1);
    expect(count("list_items")).toBe(1);
    expect(calls.create_order![0]!.args).toEqual({ item: 1 });
    expect(done.calls![1]).toMatchObject({ seq: 1, state: "applied", result: { orderId: "o-1" } });
    const stored = await runtime.execution(executionId);
    expect(stored?.status).toBe("completed");
    expect(stored?.result).toBe("o-1");
    expect((await runtime.pending()).items).toEqual([]);
  });

  it("R-AP-1: the code never sees a provisional result: nothing after the gated call runs before approval", async () => {
    const { runtime, count } = setup();
    const paused = expectPaused(
      await runtime.execute({
        code: `async () => {
          const order = await shop.create_order({ item: 2 });
          console.log("got", order);
          await mail.send({ to: "ann", order });
          return order;
        }`,
      }),
    );
    expect(paused.logs).toBeUndefined();
    expect(count("send")).toBe(0);
    const done = expectCompleted(await runtime.approve({ executionId: paused.executionId }));
    expect(done.logs).toEqual(['got {"orderId":"o-1"}']);
    expect(done.result).toEqual({ orderId: "o-1" });
    expect(count("send")).toBe(1);
  });

  it("R-AP-2: each gated call pauses in turn; approve goes on to the next approval, then completes", async () => {
    const { runtime, count } = setup();
    const first = expectPaused(
      await runtime.execute({
        code: `async () => [await shop.create_order({ item: 1 }), await shop.create_order({ item: 2 })]`,
      }),
    );
    expect(first.pending[0]).toMatchObject({ seq: 0, args: { item: 1 } });
    const second = expectPaused(await runtime.approve({ executionId: first.executionId }));
    expect(second.executionId).toBe(first.executionId);
    expect(second.pending[0]).toMatchObject({ seq: 1, args: { item: 2 } });
    expect(count("create_order")).toBe(1);
    const done = expectCompleted(await runtime.approve({ executionId: first.executionId, seq: 1 }));
    expect(done.result).toEqual([{ orderId: "o-1" }, { orderId: "o-2" }]);
    expect(count("create_order")).toBe(2);
  });

  it("R-AP-1: requiresApproval (args) => boolean pauses only for the args it says", async () => {
    const { runtime, count } = setup();
    const small = expectCompleted(await runtime.execute({ code: `async () => shop.refund({ amount: 50 })` }));
    expect(small.result).toEqual({ refunded: 50 });
    expect(small.calls![0]).toMatchObject({ state: "applied", requiresApproval: false });

    const large = expectPaused(await runtime.execute({ code: `async () => shop.refund({ amount: 500 })` }));
    expect(large.pending[0]).toMatchObject({ method: "refund", args: { amount: 500 } });
    expect(count("refund")).toBe(1);
    const done = expectCompleted(await runtime.approve({ executionId: large.executionId }));
    expect(done.result).toEqual({ refunded: 500 });
    expect(count("refund")).toBe(2);
  });

  it("R-AP-1: a requiresApproval rule that throws pauses the call", async () => {
    const { runtime, count } = setup();
    const domestic = expectCompleted(
      await runtime.execute({ code: `async () => shop.ship({ to: { country: "NL" } })` }),
    );
    expect(domestic.result).toEqual({ shipped: true });
    // The rule reads args.to.country: without `to` it throws, and the call must not slip through.
    const paused = expectPaused(await runtime.execute({ code: `async () => shop.ship({})` }));
    expect(paused.pending[0]).toMatchObject({ method: "ship", args: {} });
    expect(count("ship")).toBe(1);
  });
});

describe("missing connectors (R-AP-5)", () => {
  it("R-AP-5: a runtime without a connector the execution used returns MISSING_CONNECTOR naming it, before any code runs", async () => {
    const { runtime, shop, keyv, count } = setup();
    const paused = expectPaused(
      await runtime.execute({
        code: `async () => { await shop.list_items(); const order = await shop.create_order({ item: 1 }); await mail.send({ to: "ann" }); return order; }`,
      }),
    );
    const shopOnly = track(createCodemodeRuntime({ connectors: [shop], storage: keyv, limits: { timeoutMs: 5_000 } }));
    const missing = expectError(await shopOnly.approve({ executionId: paused.executionId }), "MISSING_CONNECTOR");
    expect(missing.executionId).toBe(paused.executionId);
    expect(missing.error).toContain("mail");
    expect(count("list_items")).toBe(1);
    expect(count("create_order")).toBe(0);
    // Nothing changed: the runtime that has every connector can still approve it.
    expect((await runtime.execution(paused.executionId))?.status).toBe("paused");
    const done = expectCompleted(await runtime.approve({ executionId: paused.executionId }));
    expect(done.result).toEqual({ orderId: "o-1" });
    expect(count("send")).toBe(1);
  });

  it("R-ST-3 R-AP-2: a second runtime with every connector over the same store resumes the paused execution", async () => {
    const { runtime, shop, mail, keyv, count } = setup();
    const paused = expectPaused(await runtime.execute({ code: ORDER_CODE }));
    const other = track(
      createCodemodeRuntime({ connectors: [shop, mail], storage: keyv, limits: { timeoutMs: 5_000 } }),
    );
    const done = expectCompleted(await other.approve({ executionId: paused.executionId }));
    expect(done.result).toBe("o-1");
    expect(count("list_items")).toBe(1);
    expect(count("create_order")).toBe(1);
  });
});
