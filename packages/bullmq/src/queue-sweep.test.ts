// Stories on a real BullMQ backend, Redis then PostgreSQL: see testing/fleet.ts for how they run.
import { expect, it } from "vitest";
import { describeOnEachBackend } from "./testing/fleet.js";
import { shopRuntime } from "./testing/shop.js";

/**
 * A run stored without a job — a submit whose job could not be added while the store restarted,
 * or whose process died between storing the run and queueing it — is found by the workers' sweep
 * and completes, without an operator (issue 41, "no submit orphaned a run").
 */
describeOnEachBackend(({ skip, fleet }) => {
  it("a running run with no job is given one by a worker's sweep and completes; one with a job in flight is left to it", async () => {
    if (skip()) return;
    const { runtime } = shopRuntime();
    const { queue, startWorker } = fleet(runtime);
    // Stored and listed, as queue.submit does, but its job never added.
    const orphan = await runtime.submit({ code: "async () => (await shop.read({})).stock" });
    if ("status" in orphan) throw new Error(orphan.error);
    const said: string[] = [];
    startWorker(runtime, {
      sweepEveryMs: 200,
      orphanAfterMs: 100,
      logger: { warn: (message) => said.push(message) },
    });
    await expect
      .poll(async () => (await runtime.outcome(orphan.executionId))?.status, { timeout: 15_000 })
      .toBe("completed");
    expect(said.some((line) => line.includes("gave 1 running run(s) without a job one"))).toBe(true);
    // Submitted through the queue: its own job runs it, and the sweep adds nothing.
    const queued = await queue.submit({ code: "async () => (await shop.read({})).stock" });
    if ("status" in queued) throw new Error(queued.error);
    expect(await queue.waitForOutcome(queued.executionId, { timeoutMs: 15_000 })).toMatchObject({
      status: "completed",
    });
  });
});
