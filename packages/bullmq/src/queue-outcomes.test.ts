// Stories on a real BullMQ backend, Redis then PostgreSQL: see testing/fleet.ts for how they run.
import { expect, it } from "vitest";
import type { CodemodeEventMap } from "./lifecycle-events.js";
import { describeOnEachBackend, submit } from "./testing/fleet.js";
import { ORDER, shopRuntime } from "./testing/shop.js";

/** How outcomes reach the fleet: waitForOutcome, and the events every queue of the fleet receives. */
describeOnEachBackend(({ skip, fleet, queueBeside }) => {
  it("waitForOutcome answers an outcome that landed before it was called, and waits while an approval is queued", async () => {
    if (skip()) return;
    const { runtime } = shopRuntime();
    const { queue, startWorker } = fleet(runtime);
    const executionId = await submit(queue, ORDER);
    // No worker yet: still running at the deadline.
    expect(await queue.waitForOutcome(executionId, { timeoutMs: 200 })).toMatchObject({
      status: "error",
      code: "BUSY",
    });
    const worker = startWorker();
    // pollMs far beyond the test: only the event can wake it.
    expect(await queue.waitForOutcome(executionId, { timeoutMs: 10_000, pollMs: 60_000 })).toMatchObject({
      status: "paused",
    });
    await worker.close();

    // A queue opened after the pause (a fresh reader that never saw its event) still answers at once.
    const late = queueBeside(runtime, queue);
    expect(await late.waitForOutcome(executionId, { timeoutMs: 5_000, pollMs: 60_000 })).toMatchObject({
      status: "paused",
    });
    // Approved, no worker running: the pause is answered, so the wait goes on.
    expect(await late.approve({ executionId })).toEqual({ executionId, seq: 1, seqs: [1] });
    expect(await late.waitForOutcome(executionId, { timeoutMs: 300 })).toMatchObject({
      status: "error",
      code: "BUSY",
      error: expect.stringMatching(/approved at seq 1/),
    });
    const waiting = late.waitForOutcome(executionId, { timeoutMs: 10_000, pollMs: 60_000 });
    startWorker();
    expect(await waiting).toMatchObject({ status: "completed", result: { orderId: "o-mug" } });
    expect(await late.waitForOutcome(executionId, { timeoutMs: 5_000, pollMs: 60_000 })).toMatchObject({
      status: "completed",
    });
    expect(await late.waitForOutcome("no-such-run")).toMatchObject({ status: "error", code: "NOT_FOUND" });
  });

  it("publishes paused, completed, error and rejected events to every queue of the fleet", async () => {
    if (skip()) return;
    const { runtime } = shopRuntime();
    const { queue, startWorker } = fleet(runtime);
    const inbox = queueBeside(runtime, queue);
    const seen: Array<{ type: string } & Record<string, unknown>> = [];
    for (const type of ["paused", "completed", "error", "rejected"] as const) {
      inbox.events.on(type, (event: CodemodeEventMap[typeof type]) => seen.push({ type, ...event }));
    }
    // The inbox reads only what is published once it is live: wait for that, as a server would at start-up.
    await inbox.ready();
    startWorker();
    const approved = await submit(queue, ORDER);
    const rejected = await submit(queue, ORDER);
    const failed = await submit(queue, "async () => { throw new Error('nope'); }");
    await expect.poll(() => seen.filter((event) => event.type === "paused").length, { timeout: 10_000 }).toBe(2);
    await queue.approve({ executionId: approved, by: "ann" });
    expect(await queue.reject({ executionId: rejected, seq: 1, by: "bob", reason: "too many mugs" })).toBe(true);
    expect(await queue.reject({ executionId: rejected, seq: 1 })).toBe(false);
    await expect.poll(() => seen.length, { timeout: 10_000 }).toBe(5);
    const of = (executionId: string) => seen.filter((event) => event.executionId === executionId);
    expect(of(approved)).toEqual([
      { type: "paused", executionId: approved, pending: [{ seq: 1, connector: "shop", method: "order" }] },
      { type: "completed", executionId: approved },
    ]);
    expect(of(rejected)).toEqual([
      { type: "paused", executionId: rejected, pending: [{ seq: 1, connector: "shop", method: "order" }] },
      { type: "rejected", executionId: rejected, seq: 1, by: "bob" },
    ]);
    expect(of(failed)).toEqual([
      { type: "error", executionId: failed, code: "PROGRAM_ERROR", error: expect.stringContaining("nope") },
    ]);
    expect(await queue.waitForOutcome(rejected, { timeoutMs: 1_000 })).toMatchObject({
      status: "error",
      code: "NOT_PAUSED",
      error: expect.stringMatching(/rejected by bob/),
    });
  });
});
