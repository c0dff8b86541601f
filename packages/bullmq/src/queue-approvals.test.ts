// Stories on a real BullMQ backend, Redis then PostgreSQL: see testing/fleet.ts for how they run.
import { createCodemodeRuntime } from "@codemode/core";
import { expect, it } from "vitest";
import { approveJobId } from "./jobs.js";
import { describeOnEachBackend, submit } from "./testing/fleet.js";
import { ORDER, shopRuntime } from "./testing/shop.js";

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
    expect(first).toEqual({ executionId, seq: 1 });
    expect(second).toEqual({ executionId, seq: 1 });
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
    expect(await queue.approve({ executionId, by: "ann" })).toEqual({ executionId, seq: 1 });
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
      { executionId, seq: 1 },
      { executionId, seq: 1 },
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
