/**
 * Replay of interrupted calls (R-RP-4, R-RP-4b, R-CON-1): an entry left executing by a host that
 * died runs again with the same idempotencyKey, or asks again when its tool says so
 * (`onInterrupted: "ask"`); ctx carries the stable ids on every pass.
 */
import { describe, expect, it } from "vitest";
import { expectCompleted, expectPaused } from "./outcome-fixtures.ts";
import { closeRuntimesAfterEach, editEntry, setup } from "./replay-fixtures.ts";

closeRuntimesAfterEach();

describe("interrupted calls (R-RP-4, R-RP-4b, R-CON-1)", () => {
  const chargeThenOrder = (tool: string) => `async () => {
    const charge = await shop.${tool}({ amount: 5 });
    const order = await shop.create_order({ charge: "paid" });
    return { charge, order };
  }`;

  it("R-RP-4 R-CON-1: an entry left executing by a host that died runs again on approve, with the same idempotencyKey", async () => {
    const { runtime, keyv, calls } = setup();
    const paused = expectPaused(await runtime.execute({ code: chargeThenOrder("charge") }));
    const executionId = paused.executionId;
    await editEntry(keyv, executionId, 0, (entry) => {
      entry.state = "executing";
      delete entry.result;
      delete entry.endedAt;
    });
    const done = expectCompleted(await runtime.approve({ executionId }));
    expect(calls.charge).toHaveLength(2);
    expect(calls.charge![0]!.context.idempotencyKey).toBe(`${executionId}:0`);
    expect(calls.charge![1]!.context.idempotencyKey).toBe(`${executionId}:0`);
    expect(done.result).toEqual({ charge: { chargeId: "ch-2" }, order: { orderId: "o-1" } });
    expect(done.calls![0]).toMatchObject({ seq: 0, state: "applied", result: { chargeId: "ch-2" } });
  });

  it("R-RP-4b: an onInterrupted: ask tool left executing goes back to pending and runs only once approved", async () => {
    const { runtime, keyv, calls, count } = setup();
    const paused = expectPaused(await runtime.execute({ code: chargeThenOrder("charge_once") }));
    const executionId = paused.executionId;
    await editEntry(keyv, executionId, 0, (entry) => {
      entry.state = "executing";
      delete entry.result;
    });
    const asked = expectPaused(await runtime.approve({ executionId }));
    expect(asked.pending).toEqual([
      { executionId, seq: 0, connector: "shop", method: "charge_once", args: { amount: 5 }, pauseId: "0.2" },
    ]);
    expect(count("charge_once")).toBe(1);
    expect(count("create_order")).toBe(0);
    expect(asked.calls![0]!.state).toBe("pending");
    expect((await runtime.execution(executionId))?.status).toBe("paused");

    const done = expectCompleted(await runtime.approve({ executionId, seq: 0 }));
    expect(count("charge_once")).toBe(2);
    expect(calls.charge_once![1]!.context.idempotencyKey).toBe(`${executionId}:0`);
    // create_order was approved by the first approve; that approval still stands.
    expect(count("create_order")).toBe(1);
    expect(done.result).toEqual({ charge: { chargeId: "cho-2" }, order: { orderId: "o-1" } });
  });

  it("R-RP-4b R-AP-9: an ask tool left executing and asked again may be approved or denied, not edited: it may have taken effect under its key", async () => {
    const { runtime, keyv, count } = setup();
    const paused = expectPaused(await runtime.execute({ code: chargeThenOrder("charge_once") }));
    const executionId = paused.executionId;
    await editEntry(keyv, executionId, 0, (entry) => {
      entry.state = "executing";
      delete entry.result;
    });
    expectPaused(await runtime.approve({ executionId }));
    const edited = await runtime.decide({
      executionId,
      decisions: [{ seq: 0, decision: "edit", args: { amount: 1 } }],
    });
    expect(edited).toMatchObject({ status: "error", code: "INVALID_DECISION" });
    expect((edited as { error: string }).error).toMatch(/was interrupted while it ran and may have taken effect/);
    expect(count("charge_once")).toBe(1);
    expectCompleted(await runtime.decide({ executionId, decisions: [{ seq: 0, decision: "approve" }] }));
  });

  it("R-RP-4b R-AP-7: an approved ask tool left executing asks again; the old approval is not reused", async () => {
    const { runtime, keyv, calls, count } = setup();
    const first = expectPaused(
      await runtime.execute({
        code: `async () => { const bet = await shop.place_bet({ on: "red" }); const order = await shop.create_order({ bet }); return order; }`,
      }),
    );
    const executionId = first.executionId;
    const atOrder = expectPaused(await runtime.approve({ executionId, seq: 0, by: "ann" }));
    expect(atOrder.pending[0]!.seq).toBe(1);
    expect(count("place_bet")).toBe(1);
    await editEntry(keyv, executionId, 0, (entry) => {
      entry.state = "executing";
      delete entry.result;
    });
    const asked = expectPaused(await runtime.approve({ executionId, seq: 1 }));
    expect(asked.pending).toEqual([
      { executionId, seq: 0, connector: "shop", method: "place_bet", args: { on: "red" }, pauseId: "0.2" },
    ]);
    expect(asked.calls![0]).toMatchObject({ state: "pending" });
    expect(asked.calls![0]!.decision).toBeUndefined();
    expect(count("place_bet")).toBe(1);
    expect(count("create_order")).toBe(0);

    const done = expectCompleted(await runtime.approve({ executionId, seq: 0, by: "carol" }));
    expect(done.result).toEqual({ orderId: "o-1" });
    expect(count("place_bet")).toBe(2);
    expect(calls.place_bet![1]!.context.idempotencyKey).toBe(`${executionId}:0`);
    expect(done.calls![0]!.decision).toMatchObject({ approved: true, by: "carol" });
    expect(calls.create_order![0]!.args).toEqual({ bet: { betId: "b-1" } });
  });

  it("R-CON-1: ctx carries the stable executionId, the seq and idempotencyKey executionId:seq on every pass", async () => {
    const { runtime, calls } = setup();
    const paused = expectPaused(
      await runtime.execute({
        code: `async () => { await shop.list_items(); await shop.read({ n: 1 }); return shop.create_order({ sku: "a" }); }`,
      }),
    );
    const executionId = paused.executionId;
    expectCompleted(await runtime.approve({ executionId }));
    const contexts = [calls.list_items![0]!.context, calls.read![0]!.context, calls.create_order![0]!.context];
    // Each call also gets its pass's signal (aborted on cancel) and deadline (its time limit).
    const passParts = { signal: expect.any(AbortSignal), deadline: expect.any(Number) };
    expect(contexts).toEqual([
      {
        executionId,
        seq: 0,
        idempotencyKey: `${executionId}:0`,
        connector: "shop",
        method: "list_items",
        ...passParts,
      },
      { executionId, seq: 1, idempotencyKey: `${executionId}:1`, connector: "shop", method: "read", ...passParts },
      {
        executionId,
        seq: 2,
        idempotencyKey: `${executionId}:2`,
        connector: "shop",
        method: "create_order",
        ...passParts,
      },
    ]);
  });
});
