import { createCodemodeRuntime, defineConnector } from "@codemode/core";
import { describe, expect, it } from "vitest";

/** `submit` stores a run for a worker to start; `outcome` answers "what happened to that run" from the store. */
function setup() {
  const orders: string[] = [];
  const shop = defineConnector({
    name: "shop",
    tools: {
      read: { execute: async () => ({ stock: 3 }) },
      order: {
        requiresApproval: true,
        execute: async (args: { sku: string }) => {
          orders.push(args.sku);
          return { orderId: `o-${args.sku}` };
        },
        revert: async () => undefined,
      },
    },
  });
  const runtime = createCodemodeRuntime({ connectors: [shop], transformResult: (result) => ({ shown: result }) });
  return { runtime, orders };
}

describe("submit, then a worker recovers it", () => {
  it("stores the run without running it; recover({ executionId }) runs its first pass; outcome() reads the result as the model got it", async () => {
    const { runtime } = setup();
    const submitted = await runtime.submit({ code: "async () => (await shop.read({})).stock" });
    if (!("executionId" in submitted) || "status" in submitted) throw new Error("submit failed");
    const { executionId } = submitted;
    expect((await runtime.executions({ status: "running" })).items).toMatchObject([{ id: executionId, passes: 0 }]);
    expect(await runtime.outcome(executionId)).toMatchObject({ status: "error", code: "BUSY" });
    // A queued run is not a dead host's run: expiry leaves it alone while it is young.
    expect(await runtime.expirePaused({ maxAgeMs: 60_000 })).toEqual([]);
    const [outcome] = await runtime.recover({ executionId });
    expect(outcome).toMatchObject({ status: "completed", result: { shown: 3 } });
    expect(await runtime.outcome(executionId)).toMatchObject({
      status: "completed",
      result: { shown: 3 },
      calls: [{ seq: 0, method: "read", state: "applied" }],
    });
    expect(await runtime.recover({ executionId })).toEqual([]);
    await runtime.close();
  });

  it("refuses what execute refuses, as an error outcome", async () => {
    const { runtime } = setup();
    expect(await runtime.submit({ code: 42 as never })).toMatchObject({ status: "error", code: "SANDBOX_ERROR" });
    expect(await runtime.submit({ code: "x".repeat(1_000_001) })).toMatchObject({
      status: "error",
      code: "VALUE_TOO_LARGE",
    });
    await runtime.close();
  });

  it("a submitted run nobody started expires once older than the cutoff", async () => {
    const { runtime } = setup();
    const submitted = (await runtime.submit({ code: "1 + 1" })) as { executionId: string };
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(await runtime.expirePaused({ maxAgeMs: 1 })).toEqual([submitted.executionId]);
    expect(await runtime.outcome(submitted.executionId)).toMatchObject({
      status: "error",
      error: "expired before any worker started it",
    });
    await runtime.close();
  });
});

describe("outcome(executionId)", () => {
  it("answers paused, rejected, rolled back and unknown runs", async () => {
    const { runtime } = setup();
    const paused = await runtime.execute({ code: "async () => shop.order({ sku: 'mug' })" });
    expect(await runtime.outcome(paused.executionId)).toMatchObject({
      status: "paused",
      pending: [{ seq: 0, method: "order", args: { sku: "mug" } }],
    });
    await runtime.reject({ executionId: paused.executionId, seq: 0, by: "bob", reason: "too expensive" });
    expect(await runtime.outcome(paused.executionId)).toMatchObject({
      status: "error",
      code: "NOT_PAUSED",
      error: expect.stringMatching(/rejected by bob: too expensive at shop\.order/),
    });

    const ordered = await runtime.execute({ code: "async () => shop.order({ sku: 'pen' })" });
    await runtime.approve({ executionId: ordered.executionId });
    await runtime.rollback({ executionId: ordered.executionId });
    expect(await runtime.outcome(ordered.executionId)).toMatchObject({
      status: "error",
      code: "NOT_PAUSED",
      error: expect.stringMatching(/rolled back/),
    });
    expect(await runtime.outcome("no-such-run")).toBeNull();
    await runtime.close();
  });
});
