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

/** For runtimes of a story that never reruns: their reads and reruns must not be reached. */
const noReruns: Pick<WorkerRuntime, "execution" | "rerun" | "executions"> = {
  executions: async () => {
    throw new Error("not expected in this story");
  },
  execution: async () => {
    throw new Error("not expected in this story");
  },
  rerun: async () => {
    throw new Error("not expected in this story");
  },
};

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

  it("R-AP-8: a batch approved action by action is one approve job each: every job's pass goes as far as its approval allows", async () => {
    const { runtime, ran } = setup();
    const executionId = await submitted(
      runtime,
      "async () => Promise.all([shop.order({ sku: 'a' }), shop.order({ sku: 'b' })])",
    );
    expect(await runJob(runtime, { name: "run", data: { executionId } })).toMatchObject({
      status: "paused",
      pending: [{ seq: 0 }, { seq: 1 }],
    });
    // The second action first: any pending action may be approved, and the run waits on the other.
    expect(await runJob(runtime, { name: "approve", data: { executionId, seq: 1 } })).toEqual({
      executionId,
      status: "paused",
      pending: [{ seq: 0, connector: "shop", method: "order" }],
    });
    expect(await runJob(runtime, { name: "approve", data: { executionId, seq: 0 } })).toEqual({
      executionId,
      status: "completed",
    });
    expect(ran.order).toBe(2);
    await runtime.close();
  });

  it("an approve job whose run was left running by a dead worker resumes it, and approves its own action when the resumed pass stops there", async () => {
    const pausedAt = (seq: number): Outcome => ({
      status: "paused",
      executionId: "x",
      pending: [{ executionId: "x", seq, connector: "shop", method: "order", args: {} }],
    });
    const approvals: unknown[] = [];
    const runtime: WorkerRuntime = {
      // First the run is `running` (the dead worker's pass, for seq 1); once resumed it waits on seq 2.
      approve: async (input) => {
        approvals.push(input);
        return approvals.length === 1
          ? { status: "error", executionId: "x", code: "NOT_PAUSED", error: "execution x is running" }
          : { status: "completed", executionId: "x", result: 1 };
      },
      recover: async () => [pausedAt(2)],
      outcome: async () => pausedAt(2),
      ...noReruns,
    };
    expect(await runJob(runtime, { name: "approve", data: { executionId: "x", seq: 2, by: "ann" } })).toEqual({
      executionId: "x",
      status: "completed",
    });
    expect(approvals).toEqual([
      { executionId: "x", seq: 2, by: "ann" },
      { executionId: "x", seq: 2, by: "ann" },
    ]);
    // A pause at other actions only is this job's pass already done: nothing is approved twice.
    approvals.length = 0;
    const moved: WorkerRuntime = { ...runtime, recover: async () => [pausedAt(3)] };
    expect(await runJob(moved, { name: "approve", data: { executionId: "x", seq: 2 } })).toMatchObject({
      status: "paused",
      pending: [{ seq: 3 }],
    });
    expect(approvals).toHaveLength(1);
  });
});

describe("runJob: failures", () => {
  it("the program's own error completes the job with that error: no retry would change it", async () => {
    const { runtime } = setup();
    const executionId = await submitted(runtime, "async () => { throw new Error('no stock'); }");
    expect(await runJob(runtime, { name: "run", data: { executionId } })).toMatchObject({
      executionId,
      status: "error",
      code: "PROGRAM_ERROR",
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
      ...noReruns,
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
