import { createCodemodeRuntime, type Outcome } from "@codemode/core";
import { describe, expect, it } from "vitest";
import { RetryableOutcomeError } from "./jobs.js";
import { runJob, type WorkerRuntime } from "./run-job.js";
import { countingShop } from "./testing/shop.js";

/** A shop whose `order` needs approval and counts how often it really ran. */
function setup() {
  let release: (() => void) | undefined;
  const { shop, ran } = countingShop({
    /** Holds its pass until the test lets go, so another job meets the run held. */
    hold: { execute: () => new Promise((resolve) => (release = () => resolve({ held: true }))) },
  });
  const runtime = createCodemodeRuntime({ connectors: [shop], logger: { warn() {} } });
  return { runtime, ran, release: () => release?.() };
}

async function submitted(runtime: ReturnType<typeof setup>["runtime"], code: string): Promise<string> {
  const result = await runtime.submit({ code });
  if ("status" in result) throw new Error(`submit failed: ${result.error}`);
  return result.executionId;
}

describe("runJob: what a worker does with one job", () => {
  it("a run job starts a submitted run; the same job again (a duplicate, or a rerun after a stall) only reads the outcome", async () => {
    const { runtime, ran } = setup();
    const executionId = await submitted(runtime, "async () => (await shop.read({})).stock");
    expect(await runJob(runtime, { name: "run", data: { executionId } })).toEqual({ executionId, status: "completed" });
    expect(await runJob(runtime, { name: "run", data: { executionId } })).toEqual({ executionId, status: "completed" });
    expect(ran.read).toBe(1);
    await runtime.close();
  });

  it("pauses at the approval, and an approve job runs the approved call once however often it is delivered", async () => {
    const { runtime, ran } = setup();
    const executionId = await submitted(
      runtime,
      "async () => { await shop.read({}); return shop.order({ sku: 'mug' }); }",
    );
    expect(await runJob(runtime, { name: "run", data: { executionId } })).toEqual({
      executionId,
      status: "paused",
      pending: [{ seq: 1, connector: "shop", method: "order" }],
    });
    const approve = { name: "approve", data: { executionId, seq: 1, by: "ann", reason: "ok" } };
    expect(await runJob(runtime, approve)).toEqual({ executionId, status: "completed" });
    expect(await runJob(runtime, approve)).toEqual({ executionId, status: "completed" });
    expect(ran.order).toBe(1);
    const outcome = await runtime.outcome(executionId);
    expect(outcome).toMatchObject({
      status: "completed",
      result: { orderId: "o-mug" },
      calls: [{ seq: 0 }, { seq: 1, decision: { approved: true, by: "ann", reason: "ok" } }],
    });
    await runtime.close();
  });

  it("the program's own error completes the job with that error: no retry would change it", async () => {
    const { runtime } = setup();
    const executionId = await submitted(runtime, "async () => { throw new Error('no stock'); }");
    expect(await runJob(runtime, { name: "run", data: { executionId } })).toMatchObject({
      executionId,
      status: "error",
      code: "SANDBOX_ERROR",
      error: expect.stringContaining("no stock"),
    });
    await runtime.close();
  });

  it("a run held by a live pass throws BUSY, so BullMQ retries the job later", async () => {
    const { runtime, release } = setup();
    const executionId = await submitted(runtime, "async () => shop.hold({})");
    const first = runJob(runtime, { name: "run", data: { executionId } });
    await expect.poll(async () => (await runtime.execution(executionId))?.log.length).toBe(1);
    const second = await runJob(runtime, { name: "run", data: { executionId } }).catch((error: unknown) => error);
    expect(second).toBeInstanceOf(RetryableOutcomeError);
    expect((second as RetryableOutcomeError).outcome).toMatchObject({ code: "BUSY" });
    release();
    expect(await first).toEqual({ executionId, status: "completed" });
    expect(await runJob(runtime, { name: "run", data: { executionId } })).toEqual({ executionId, status: "completed" });
    await runtime.close();
  });

  it("a store failure throws STORAGE_ERROR (retried); an unknown run is NOT_FOUND (not retried)", async () => {
    const failing: WorkerRuntime = {
      recover: async ({ executionId } = {}) => [
        {
          status: "error",
          executionId: executionId ?? "",
          code: "STORAGE_ERROR",
          error: "connection refused",
        } satisfies Outcome,
      ],
      approve: async () => ({ status: "error", executionId: "x", code: "STORAGE_ERROR", error: "connection refused" }),
      outcome: async () => null,
    };
    await expect(runJob(failing, { name: "run", data: { executionId: "x" } })).rejects.toThrow(
      /STORAGE_ERROR: connection refused/,
    );
    await expect(runJob(failing, { name: "approve", data: { executionId: "x", seq: 0 } })).rejects.toBeInstanceOf(
      RetryableOutcomeError,
    );
    const empty: WorkerRuntime = { ...failing, recover: async () => [] };
    expect(await runJob(empty, { name: "run", data: { executionId: "x" } })).toMatchObject({
      status: "error",
      code: "NOT_FOUND",
    });
    const unreachable: WorkerRuntime = {
      ...empty,
      outcome: async () => {
        throw Object.assign(new Error("down"), { name: "CodemodeError", code: "STORAGE_ERROR" });
      },
    };
    await expect(runJob(unreachable, { name: "run", data: { executionId: "x" } })).rejects.toBeInstanceOf(
      RetryableOutcomeError,
    );
  });

  it("refuses job data that is not ours", async () => {
    const { runtime } = setup();
    await expect(runJob(runtime, { name: "run", data: {} })).rejects.toThrow(TypeError);
    await expect(runJob(runtime, { name: "approve", data: { executionId: "x" } })).rejects.toThrow(/no seq/);
    await expect(runJob(runtime, { name: "email", data: { executionId: "x" } })).rejects.toThrow(/not a Code Mode job/);
    await runtime.close();
  });
});
