// Stories on a real BullMQ backend, Redis then PostgreSQL: see testing/fleet.ts for how they run.
import { expect, it } from "vitest";
import { runJobId } from "./jobs.js";
import { describeOnEachBackend, flakyRuntime, submit } from "./testing/fleet.js";
import { ORDER, shopRuntime } from "./testing/shop.js";

/** Store outages and busy runs are retried with backoff, and a job that gave up is put back by requeue. */
describeOnEachBackend(({ skip, fleet }) => {
  it("retries STORAGE_ERROR and BUSY outcomes with backoff, and never the program's own errors", async () => {
    if (skip()) return;
    const { runtime } = shopRuntime();
    const { queue, startWorker } = fleet(runtime);
    const worker = startWorker(flakyRuntime(runtime, { recover: 2, approve: 1 }));
    const attempts: Record<string, number> = {};
    worker.on("completed", (job) => (attempts[job.id ?? ""] = job.attemptsMade));

    const ordering = await submit(queue, ORDER);
    expect(await queue.waitForOutcome(ordering, { timeoutMs: 10_000 })).toMatchObject({ status: "paused" });
    // attemptsMade counts the successful attempt too: two failures, then the pass. The store has the
    // outcome a moment before BullMQ marks the job completed, hence the poll.
    await expect.poll(() => attempts[`run_${ordering}`]).toBe(3);
    await queue.approve({ executionId: ordering });
    expect(await queue.waitForOutcome(ordering, { timeoutMs: 10_000 })).toMatchObject({ status: "completed" });
    await expect.poll(() => attempts[`approve_${ordering}_1`]).toBe(2);

    const failing = await submit(queue, "async () => { await shop.read({}); throw new Error('out of mugs'); }");
    expect(await queue.waitForOutcome(failing, { timeoutMs: 10_000 })).toMatchObject({
      status: "error",
      code: "PROGRAM_ERROR",
      error: expect.stringContaining("out of mugs"),
    });
    await expect.poll(() => attempts[`run_${failing}`]).toBe(1);
  });

  it("R-ST-5: a run job that gave up in a store outage is put back by requeue with all its attempts, once however many requeue at the same time", async () => {
    if (skip()) return;
    const { runtime } = shopRuntime();
    const { queue, startWorker } = fleet(runtime, { attempts: 2 });
    const failures = { recover: 2, approve: 0 };
    const worker = startWorker(flakyRuntime(runtime, failures));
    const attempts: Record<string, number> = {};
    worker.on("completed", (job) => (attempts[job.id ?? ""] = job.attemptsMade));
    const executionId = await submit(queue, ORDER);
    await expect.poll(() => queue.bullmq.getJobState(runJobId(executionId)), { timeout: 10_000 }).toBe("failed");
    expect(await queue.waitForOutcome(executionId, { timeoutMs: 300 })).toMatchObject({
      status: "error",
      code: "BUSY",
    });

    // The outage is not quite over: the put-back job needs both of its attempts again.
    failures.recover = 1;
    await Promise.all([queue.requeue(executionId), queue.requeue(executionId)]);
    expect(await queue.waitForOutcome(executionId, { timeoutMs: 10_000 })).toMatchObject({
      status: "paused",
      pending: [{ seq: 1 }],
    });
    await expect.poll(() => attempts[runJobId(executionId)]).toBe(2);
  });
});
