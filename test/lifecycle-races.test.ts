/**
 * Control operations racing an approval in one process (R-AP-6): two approvals, approve racing
 * rollback or reject, rolling back a paused run: the order runs at most once and the record
 * agrees. Delete, expiry and lock waits are in lifecycle-races-expiry.test.ts.
 */
import { describe, expect, it } from "vitest";
import {
  closeRuntimesAfterEach,
  events,
  type HookCall,
  hooked,
  pausedOrder,
  runtimeWith,
  shopTools,
} from "./lifecycle-fixtures.ts";

closeRuntimesAfterEach();

describe("R-AP-6 control operations racing an approval in one process", () => {
  it("R-AP-6: two approvals at once place the order once: one completes, the other gets NOT_PAUSED", async () => {
    const { runtime, counter, executionId } = await pausedOrder();

    const [first, second] = await Promise.all([runtime.approve({ executionId }), runtime.approve({ executionId })]);

    expect(counter.orders).toBe(1);
    expect(first).toMatchObject({ status: "completed", result: "o-1" });
    expect(second).toMatchObject({ status: "error", code: "NOT_PAUSED" });
  });

  it("R-AP-6: approve racing rollback — whichever comes first wins, the order runs at most once, the record agrees", async () => {
    {
      const { runtime, counter, executionId } = await pausedOrder();
      const [approved, report] = await Promise.all([
        runtime.approve({ executionId }),
        runtime.rollback({ executionId }),
      ]);
      expect(approved).toMatchObject({ status: "completed", result: "o-1" });
      expect(counter.orders).toBe(1);
      // The rollback waited for the pass and then reverted the order it placed.
      expect(report).toMatchObject({ status: "rolled_back", reverted: [1], skipped: [0], failed: [] });
      expect((await runtime.execution(executionId))?.log.map((entry) => entry.state)).toEqual(["applied", "reverted"]);
    }
    {
      const { runtime, counter, calls, executionId } = await pausedOrder();
      const [report, approved] = await Promise.all([
        runtime.rollback({ executionId }),
        runtime.approve({ executionId }),
      ]);
      // Only list_items was applied and it has no revert: nothing reverted, the run stays paused...
      expect(report).toMatchObject({ status: "paused", reverted: [], skipped: [0] });
      // ...so the approval that came second still resumes it, once.
      expect(approved).toMatchObject({ status: "completed", result: "o-1" });
      expect(counter.orders).toBe(1);
      expect(events(calls).filter((event) => event.includes("dispose"))).toEqual(["shop.disposeExecution(completed)"]);
    }
  });

  it("R-AP-6 R-RB-3: rolling back a paused run that applied a revertible call ends it; an approval racing behind gets NOT_PAUSED and the order never runs", async () => {
    const calls: HookCall[] = [];
    const counter = { orders: 0 };
    const reverted: unknown[] = [];
    const runtime = runtimeWith({
      connectors: [
        hooked("shop", calls, {
          ...shopTools(counter),
          reserve: { execute: () => ({ reservation: "r-1" }), revert: (_args, result) => void reverted.push(result) },
        }),
      ],
    });
    const paused = await runtime.execute({
      code: `async () => { await shop.reserve({ item: 1 }); return shop.create_order({ item: 1 }); }`,
    });
    const executionId = paused.executionId;

    const [report, approved] = await Promise.all([runtime.rollback({ executionId }), runtime.approve({ executionId })]);

    expect(report).toMatchObject({ status: "rolled_back", reverted: [0], skipped: [], failed: [] });
    expect(approved).toMatchObject({ status: "error", code: "NOT_PAUSED" });
    expect(counter.orders).toBe(0);
    expect(reverted).toEqual([{ reservation: "r-1" }]);
    expect((await runtime.pending(executionId)).items).toEqual([]);
    expect(events(calls)).toEqual(["shop.onPassEnd(paused)", "shop.disposeExecution(rolled_back)"]);
  });

  it("R-AP-6: approve racing reject — the first decision stands, the order runs at most once", async () => {
    {
      const { runtime, counter, executionId } = await pausedOrder();
      const [approved, rejected] = await Promise.all([
        runtime.approve({ executionId }),
        runtime.reject({ executionId, seq: 1 }),
      ]);
      expect(approved.status).toBe("completed");
      expect(rejected).toBe(false);
      expect(counter.orders).toBe(1);
      expect((await runtime.execution(executionId))?.status).toBe("completed");
    }
    {
      const { runtime, counter, executionId } = await pausedOrder();
      const [rejected, approved] = await Promise.all([
        runtime.reject({ executionId, seq: 1 }),
        runtime.approve({ executionId }),
      ]);
      expect(rejected).toBe(true);
      expect(approved).toMatchObject({ status: "error", code: "NOT_PAUSED" });
      expect(counter.orders).toBe(0);
      expect((await runtime.execution(executionId))?.status).toBe("rejected");
    }
  });
});
