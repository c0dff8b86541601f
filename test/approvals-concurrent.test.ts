/**
 * Concurrent decisions (R-AP-6): two approvals at once, two runtimes sharing a store, approve
 * racing reject, rollback or delete: the gated action runs at most once and the run ends
 * consistent.
 */
import { createCodemodeRuntime } from "@codemode/core";
import { describe, expect, it } from "vitest";
import { closeRuntimesAfterEach, ORDER_CODE, setup, track } from "./approvals-fixtures.ts";
import { expectCompleted, expectError, expectPaused } from "./outcome-fixtures.ts";

closeRuntimesAfterEach();

describe("concurrent decisions (R-AP-6)", () => {
  it("R-AP-6: two approvals at the same time run the gated action exactly once; the other gets NOT_PAUSED or BUSY", async () => {
    const { runtime, count } = setup();
    const paused = expectPaused(await runtime.execute({ code: ORDER_CODE }));
    const outcomes = await Promise.all([
      runtime.approve({ executionId: paused.executionId }),
      runtime.approve({ executionId: paused.executionId }),
    ]);
    expect(count("create_order")).toBe(1);
    const completed = outcomes.filter((outcome) => outcome.status === "completed");
    const refused = outcomes.filter((outcome) => outcome.status === "error");
    expect(completed).toHaveLength(1);
    expect(refused).toHaveLength(1);
    expect(["NOT_PAUSED", "BUSY"]).toContain((refused[0] as { code: string }).code);
    expect((completed[0] as { result: unknown }).result).toBe("o-1");
  });

  it("R-AP-6: two runtimes in one process sharing a Keyv store approve at the same time: the action runs once", async () => {
    const { runtime, shop, mail, keyv, count } = setup();
    const paused = expectPaused(await runtime.execute({ code: ORDER_CODE }));
    const other = track(
      createCodemodeRuntime({ connectors: [shop, mail], storage: keyv, limits: { timeoutMs: 5_000 } }),
    );
    const outcomes = await Promise.all([
      runtime.approve({ executionId: paused.executionId }),
      other.approve({ executionId: paused.executionId }),
    ]);
    expect(count("create_order")).toBe(1);
    expect(outcomes.map((outcome) => outcome.status).sort()).toEqual(["completed", "error"]);
  });

  it.each(["approve first", "reject first"])(
    "R-AP-6: approve racing reject (%s) applies the action at most once and ends consistent",
    async (order) => {
      const { runtime, count } = setup();
      const paused = expectPaused(await runtime.execute({ code: ORDER_CODE }));
      const executionId = paused.executionId;
      const approve = () => runtime.approve({ executionId, by: "ann" });
      const reject = () => runtime.reject({ executionId, seq: 1, by: "bob" });
      const [approval, rejected] =
        order === "approve first"
          ? await Promise.all([approve(), reject()])
          : await Promise.all([reject(), approve()]).then(([r, a]) => [a, r] as const);
      const stored = await runtime.execution(executionId);
      expect(count("create_order")).toBeLessThanOrEqual(1);
      if (rejected) {
        expect(count("create_order")).toBe(0);
        expectError(approval, "NOT_PAUSED");
        expect(stored?.status).toBe("rejected");
        expect(stored?.log[1]).toMatchObject({ state: "error", decision: { approved: false, by: "bob" } });
      } else {
        expect(count("create_order")).toBe(1);
        expect(expectCompleted(approval).result).toBe("o-1");
        expect(stored?.status).toBe("completed");
        expect(stored?.log[1]).toMatchObject({ state: "applied", decision: { approved: true, by: "ann" } });
      }
    },
  );
});

describe("approve racing rollback and delete (R-AP-6)", () => {
  const CHARGE_THEN_ORDER = `async () => { await shop.charge({ amount: 5 }); return (await shop.create_order({ item: 1 })).orderId; }`;

  it.each(["approve first", "rollback first"])(
    "R-AP-6: approve racing rollback (%s) runs the action at most once and ends consistent",
    async (order) => {
      const { runtime, count, reverts } = setup();
      const paused = expectPaused(await runtime.execute({ code: CHARGE_THEN_ORDER }));
      const executionId = paused.executionId;
      const approve = () => runtime.approve({ executionId });
      const rollback = () => runtime.rollback({ executionId });
      const [approval, report] =
        order === "approve first"
          ? await Promise.all([approve(), rollback()])
          : await Promise.all([rollback(), approve()]).then(([r, a]) => [a, r] as const);
      const stored = await runtime.execution(executionId);
      expect(stored?.status).toBe("rolled_back");
      if (approval.status === "completed") {
        expect(count("create_order")).toBe(1);
        expect(report.reverted).toEqual([1, 0]);
        expect(reverts).toEqual(['create_order {"item":1}', 'charge {"amount":5}']);
      } else {
        expectError(approval, "NOT_PAUSED");
        expect(count("create_order")).toBe(0);
        expect(report.reverted).toEqual([0]);
        expect(reverts).toEqual(['charge {"amount":5}']);
      }
    },
  );

  it.each(["approve first", "delete first"])(
    "R-AP-6: approve racing delete (%s) runs the action at most once and ends consistent",
    async (order) => {
      const { runtime, count } = setup();
      const paused = expectPaused(await runtime.execute({ code: CHARGE_THEN_ORDER }));
      const executionId = paused.executionId;
      const approve = () => runtime.approve({ executionId });
      const remove = () => runtime.deleteExecution(executionId);
      const [approval, deleted] =
        order === "approve first"
          ? await Promise.all([approve(), remove()])
          : await Promise.all([remove(), approve()]).then(([d, a]) => [a, d] as const);
      expect(deleted).toBe(true);
      expect(await runtime.execution(executionId)).toBeNull();
      if (approval.status === "completed") {
        expect(count("create_order")).toBe(1);
        expect(approval.result).toBe("o-1");
      } else {
        expectError(approval, "NOT_FOUND");
        expect(count("create_order")).toBe(0);
      }
    },
  );
});
