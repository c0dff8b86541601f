// Stories on a real BullMQ backend, Redis then PostgreSQL: see testing/fleet.ts for how they run.
import { createCodemodeRuntime } from "@codemode/core";
import { expect, it } from "vitest";
import { approveJobId } from "./jobs.js";
import { type BackendStories, describeOnEachBackend, submit } from "./testing/fleet.js";
import { ORDER, shopRuntime } from "./testing/shop.js";

/** Three orders at once: the run pauses once, waiting on seqs 0, 1 and 2 (R-AP-8). */
const BATCH = "async () => Promise.all(['a', 'b', 'c'].map((sku) => shop.order({ sku })))";

/** Approvals through the queue: each call runs once, however often it is approved or delivered. */
describeOnEachBackend(({ skip, fleet, closeAfterTest }) => {
  it("a duplicate run or approve job is one job: the approved call runs once", async () => {
    if (skip()) return;
    const { runtime, ran } = shopRuntime();
    const { queue, startWorker } = fleet(runtime);
    const executionId = await submit(queue, ORDER);
    await queue.requeue(executionId);
    await queue.requeue(executionId);
    expect(await queue.bullmq.getJobCounts("waiting")).toEqual({ waiting: 1 });
    startWorker();
    expect(await queue.waitForOutcome(executionId, { timeoutMs: 10_000 })).toMatchObject({
      status: "paused",
      pending: [{ seq: 1, method: "order" }],
    });

    const [first, second] = await Promise.all([
      queue.approve({ executionId, by: "ann" }),
      queue.approve({ executionId, seq: 1, by: "bob" }),
    ]);
    expect(first).toEqual({ executionId, seq: 1, seqs: [1] });
    expect(second).toEqual({ executionId, seq: 1, seqs: [1] });
    expect(await queue.waitForOutcome(executionId, { timeoutMs: 10_000 })).toMatchObject({
      status: "completed",
      result: { orderId: "o-mug" },
    });
    expect(ran).toEqual({ read: 1, order: 1 });
    // Once done, a late click is refused before any job is queued.
    expect(await queue.approve({ executionId, seq: 1 })).toMatchObject({ status: "error", code: "NOT_PAUSED" });
    expect(await queue.approve({ executionId: "no-such-run" })).toMatchObject({ status: "error", code: "NOT_FOUND" });
  });

  it("R-AP-2, R-AP-5, R-AP-6: an approve job that gave up (its worker lacked the connector) runs again when the call is approved again, once, and the run completes", async () => {
    if (skip()) return;
    const { runtime, ran, storage } = shopRuntime();
    const { queue, startWorker } = fleet(runtime, { attempts: 1 });
    const first = startWorker();
    const executionId = await submit(queue, ORDER);
    expect(await queue.waitForOutcome(executionId, { timeoutMs: 10_000 })).toMatchObject({
      status: "paused",
      pending: [{ seq: 1 }],
    });
    await first.close();

    // A worker deployed without the shop connector answers MISSING_CONNECTOR; with one attempt the job gives up.
    const withoutShop = createCodemodeRuntime({ connectors: [], storage, logger: { warn() {} } });
    closeAfterTest(withoutShop);
    const lacking = startWorker(withoutShop);
    expect(await queue.approve({ executionId, by: "ann" })).toEqual({ executionId, seq: 1, seqs: [1] });
    await expect.poll(() => queue.bullmq.getJobState(approveJobId(executionId, 1)), { timeout: 10_000 }).toBe("failed");
    await lacking.close();
    // The approval never ran: the run is still paused at that call, and says so.
    expect(await queue.waitForOutcome(executionId, { timeoutMs: 1_000 })).toMatchObject({
      status: "paused",
      pending: [{ seq: 1 }],
    });

    // Approved again, by two people at once, with a worker that has the connector: the kept job runs again, once.
    startWorker();
    const again = await Promise.all([
      queue.approve({ executionId, seq: 1, by: "bob" }),
      queue.approve({ executionId, seq: 1, by: "cy" }),
    ]);
    expect(again).toEqual([
      { executionId, seq: 1, seqs: [1] },
      { executionId, seq: 1, seqs: [1] },
    ]);
    expect(await queue.waitForOutcome(executionId, { timeoutMs: 10_000 })).toMatchObject({
      status: "completed",
      result: { orderId: "o-mug" },
      // The audit trail names who approved it this time, not ann, whose approval never ran.
      calls: [{ seq: 0 }, { seq: 1, decision: { approved: true, by: expect.stringMatching(/^(bob|cy)$/) } }],
    });
    expect(ran).toEqual({ read: 1, order: 1 });
    expect(await queue.approve({ executionId, seq: 1 })).toMatchObject({ status: "error", code: "NOT_PAUSED" });
  });
});

/** Three gated orders submitted and run by a worker as far as their one pause; that worker is closed. */
async function pausedBatch(fleet: BackendStories["fleet"]) {
  const { runtime, ran } = shopRuntime();
  const { queue, startWorker } = fleet(runtime);
  const executionId = await submit(queue, BATCH);
  const first = startWorker();
  expect(await queue.waitForOutcome(executionId, { timeoutMs: 10_000 })).toMatchObject({
    status: "paused",
    pending: [{ seq: 0 }, { seq: 1 }, { seq: 2 }],
  });
  await first.close();
  return { ran, queue, startWorker, executionId };
}

/** Batched pauses through the queue (R-AP-8): any pending seq, or all of them. */
describeOnEachBackend(({ skip, fleet }) => {
  it("R-AP-8: a batched pause through the queue: approving an action that is not the first queues that one alone, and approving without a seq completes the run", async () => {
    if (skip()) return;
    const { ran, queue, startWorker, executionId } = await pausedBatch(fleet);

    // Seq 2 is pending as much as seq 0: approving it queues its job, and the wait knows the pause is answered.
    expect(await queue.approve({ executionId, seq: 2, by: "ann" })).toEqual({ executionId, seq: 2, seqs: [2] });
    expect(await queue.waitForOutcome(executionId, { timeoutMs: 300 })).toMatchObject({
      status: "error",
      code: "BUSY",
      error: expect.stringMatching(/approved at seq 2;/),
    });
    startWorker();
    expect(await queue.waitForOutcome(executionId, { timeoutMs: 10_000 })).toMatchObject({
      status: "paused",
      pending: [{ seq: 0 }, { seq: 1 }],
    });
    expect(ran.order).toBe(1);
    expect(await queue.approve({ executionId, seq: 2 })).toMatchObject({
      status: "error",
      code: "NOT_PAUSED",
      error: "action 2 is not pending; pending now: seq 0 (shop.order), seq 1 (shop.order)",
    });

    // Without a seq: every action pending now, as runtime.approve.
    expect(await queue.approve({ executionId, by: "bob" })).toEqual({ executionId, seq: 0, seqs: [0, 1] });
    expect(await queue.waitForOutcome(executionId, { timeoutMs: 10_000 })).toMatchObject({
      status: "completed",
      result: [{ orderId: "o-a" }, { orderId: "o-b" }, { orderId: "o-c" }],
      calls: [
        { seq: 0, decision: { approved: true, by: "bob" } },
        { seq: 1, decision: { approved: true, by: "bob" } },
        { seq: 2, decision: { approved: true, by: "ann" } },
      ],
    });
    expect(ran.order).toBe(3);
  });

  it("R-AP-6, R-AP-8: approving a whole batch is one job per action: a second approve of all, or of one of them, queues nothing more, and the wait goes on until every approval ran", async () => {
    if (skip()) return;
    const { ran, queue, startWorker, executionId } = await pausedBatch(fleet);

    const clicks = await Promise.all([
      queue.approve({ executionId, by: "ann" }),
      queue.approve({ executionId, by: "ann" }),
      queue.approve({ executionId, seq: 1, by: "bob" }),
    ]);
    expect(clicks).toEqual([
      { executionId, seq: 0, seqs: [0, 1, 2] },
      { executionId, seq: 0, seqs: [0, 1, 2] },
      { executionId, seq: 1, seqs: [1] },
    ]);
    expect(await queue.bullmq.getJobCounts("waiting")).toEqual({ waiting: 3 });
    expect(await queue.waitForOutcome(executionId, { timeoutMs: 300 })).toMatchObject({
      status: "error",
      code: "BUSY",
      error: expect.stringMatching(/approved at seq 0, 1, 2;/),
    });

    // Started before the worker: it answers the end of the run, not a pause on the way there.
    const waiting = queue.waitForOutcome(executionId, { timeoutMs: 10_000 });
    startWorker();
    expect(await waiting).toMatchObject({
      status: "completed",
      result: [{ orderId: "o-a" }, { orderId: "o-b" }, { orderId: "o-c" }],
    });
    expect(ran.order).toBe(3);
    expect(await queue.approve({ executionId })).toMatchObject({ status: "error", code: "NOT_PAUSED" });
  });
});
