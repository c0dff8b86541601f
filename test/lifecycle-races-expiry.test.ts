/**
 * Control operations racing an approval in one process (R-AP-6, R-RE-2, R-ST-4): approve racing
 * deleteExecution or expirePaused, and rollback, approve, delete and expiry giving up after
 * lockWaitMs while a pass holds the execution.
 */
import { describe, expect, it } from "vitest";
import {
  closeRuntimesAfterEach,
  events,
  gate,
  HOUR,
  hooked,
  pausedOrder,
  runtimeWith,
  shiftableClock,
  shopTools,
} from "./lifecycle-fixtures.ts";

closeRuntimesAfterEach();

describe("R-AP-6 control operations racing an approval in one process", () => {
  it("R-AP-6: approve racing deleteExecution — deleted first means NOT_FOUND and no order; approved first means one order, then the finished run is deleted", async () => {
    {
      const { runtime, counter, calls, executionId } = await pausedOrder();
      const [deleted, approved] = await Promise.all([
        runtime.deleteExecution(executionId),
        runtime.approve({ executionId }),
      ]);
      expect(deleted).toBe(true);
      expect(approved).toMatchObject({ status: "error", code: "NOT_FOUND" });
      expect(counter.orders).toBe(0);
      expect(events(calls)).toEqual(["shop.onPassEnd(paused)", "shop.disposeExecution(rejected)"]);
    }
    {
      const { runtime, counter, calls, executionId } = await pausedOrder();
      const [approved, deleted] = await Promise.all([
        runtime.approve({ executionId }),
        runtime.deleteExecution(executionId),
      ]);
      expect(approved).toMatchObject({ status: "completed", result: "o-1" });
      expect(deleted).toBe(true);
      expect(counter.orders).toBe(1);
      expect(await runtime.execution(executionId)).toBeNull();
      expect(events(calls).filter((event) => event.includes("dispose"))).toEqual(["shop.disposeExecution(completed)"]);
    }
  });

  it("R-AP-6 R-RE-2: approve racing expirePaused — the order runs at most once and the record matches who won", async () => {
    const clock = shiftableClock();
    for (const expiryFirst of [true, false]) {
      const { runtime, counter, calls, executionId } = await pausedOrder();
      clock.advance(2 * HOUR);
      const expiry = () => runtime.expirePaused({ maxAgeMs: HOUR });
      const approval = () => runtime.approve({ executionId });
      const [expired, approved] = expiryFirst
        ? await Promise.all([expiry(), approval()])
        : await Promise.all([approval(), expiry()]).then(([outcome, ids]) => [ids, outcome] as const);

      const status = (await runtime.execution(executionId))?.status;
      const disposals = events(calls).filter((event) => event.includes("dispose"));
      if (expired.includes(executionId)) {
        expect(approved).toMatchObject({ status: "error", code: "NOT_PAUSED" });
        expect(counter.orders).toBe(0);
        expect(status).toBe("rejected");
        expect(disposals).toEqual(["shop.disposeExecution(rejected)"]);
      } else {
        expect(approved).toMatchObject({ status: "completed", result: "o-1" });
        expect(counter.orders).toBe(1);
        expect(status).toBe("completed");
        expect(disposals).toEqual(["shop.disposeExecution(completed)"]);
      }
      expect(expired.filter((id) => id !== executionId)).toEqual([]);
    }
  });

  it("R-AP-6 R-ST-4: while a pass holds the execution, rollback, approve, delete and expiry give up after lockWaitMs and say BUSY (as data, or delete as a BUSY rejection)", async () => {
    const inFlight = gate();
    const counter = { orders: 0 };
    const runtime = runtimeWith({
      lockWaitMs: 50,
      connectors: [
        hooked("shop", [], {
          ...shopTools(counter),
          sync: {
            execute: async () => {
              inFlight.markStarted();
              await inFlight.opened;
              return "synced";
            },
            revert: () => undefined,
          },
        }),
      ],
    });

    const outcome = runtime.execute({
      code: `async () => { await shop.sync(); return shop.create_order({ item: 1 }); }`,
    });
    await inFlight.started;
    const [running] = (await runtime.executions()).items;
    const executionId = running!.id;

    const report = await runtime.rollback({ executionId });
    expect(report).toMatchObject({ executionId, code: "BUSY", reverted: [], failed: [], skipped: [] });
    const approved = await runtime.approve({ executionId });
    expect(approved.status).toBe("error");
    expect(approved.status === "error" && ["BUSY", "NOT_PAUSED"].includes(approved.code)).toBe(true);
    // "false" would read as "no such execution": a busy one rejects with BUSY (R-RT-3).
    await expect(runtime.deleteExecution(executionId)).rejects.toMatchObject({ name: "CodemodeError", code: "BUSY" });
    expect(await runtime.expirePaused({ maxAgeMs: 0 })).toEqual([]);
    expect((await runtime.execution(executionId))?.status).toBe("running");

    inFlight.open();
    expect(await outcome).toMatchObject({ status: "paused", executionId });
    expect(await runtime.approve({ executionId })).toMatchObject({ status: "completed", result: { orderId: "o-1" } });
    expect(counter.orders).toBe(1);
  });
});
