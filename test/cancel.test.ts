/**
 * `runtime.cancel` (R-MCP-T: tasks/cancel rejects a paused run, or stops a running pass and ends
 * the run), on memory, SQLite, Redis and PostgreSQL: a paused run, a program that never yields (in
 * the host or in a sandbox thread), a long tool call told through its signal. A run running in
 * another runtime, a run nobody runs, hostile requests and the answers for ended and unknown runs
 * are in cancel-requests.test.ts. Real child processes cancel across processes in
 * mcp-tasks.test.ts.
 */
import { createCodemodeRuntime } from "@codemode/core";
import { describe, expect, it } from "vitest";
import { until, useJobs } from "./cancel-fixtures.ts";
import { expectStatus, STORES } from "./four-stores-fixtures.ts";

for (const store of STORES) {
  describe(`cancel on ${store.name}`, () => {
    const { cannotRun, jobsRuntime, statusOf } = useJobs(store);

    it("R-MCP-T: a paused run is rejected with code CANCELLED; its pending actions close and never run", async () => {
      if (cannotRun()) return;
      const { runtime } = jobsRuntime();
      const paused = await runtime.execute({
        code: "async () => Promise.all([jobs.pay({ n: 1 }), jobs.pay({ n: 2 })])",
      });
      expectStatus(paused, "paused");
      expect(paused.pending.map((action) => action.seq)).toEqual([0, 1]);

      const report = await runtime.cancel({ executionId: paused.executionId, by: "ops", reason: "not today" });
      expect(report).toEqual({ executionId: paused.executionId, result: "cancelled", status: "rejected" });
      const state = await runtime.execution(paused.executionId);
      expect(state).toMatchObject({ status: "rejected", errorCode: "CANCELLED", error: "cancelled by ops: not today" });
      const outcome = (await runtime.outcome(paused.executionId)) ?? undefined;
      expectStatus(outcome, "error");
      expect(outcome.code).toBe("CANCELLED");
      expect(outcome.calls?.map((call) => [call.seq, call.state, call.error])).toEqual([
        [0, "error", "not run: the execution was cancelled by ops: not today"],
        [1, "error", "not run: the execution was cancelled by ops: not today"],
      ]);
      // Nothing is left to approve, and asking again changes nothing.
      const late = await runtime.approve({ executionId: paused.executionId });
      expectStatus(late, "error");
      expect(late.code).toBe("NOT_PAUSED");
      expect(await runtime.cancel({ executionId: paused.executionId })).toMatchObject({ result: "ended" });
    });

    it("R-MCP-T: a pass that never yields is stopped at once in its own process; the run ends CANCELLED", async () => {
      if (cannotRun()) return;
      const { runtime } = jobsRuntime();
      const submitted = await runtime.submit({ code: "async () => { for (;;) {} }" });
      if ("status" in submitted) throw new Error(`not submitted: ${submitted.error}`);
      const running = runtime.recover({ executionId: submitted.executionId });
      await until(async () => runtime.load().passesInFlight > 0);

      const report = await runtime.cancel({ executionId: submitted.executionId, by: "ops" });
      expect(report).toEqual({ executionId: submitted.executionId, result: "cancelled", status: "rejected" });
      const [outcome] = await running;
      expectStatus(outcome, "error");
      expect(outcome.code).toBe("CANCELLED");
      expect(outcome.error).toContain("cancelled by ops");
      expect(await statusOf(runtime, submitted.executionId)).toBe("rejected");
    });

    it("R-MCP-T: a long tool call is told through its signal, and the failed call is recorded", async () => {
      if (cannotRun()) return;
      const { runtime, seen } = jobsRuntime();
      const before = Date.now();
      const execution = runtime.execute({ code: "async () => jobs.wait({})" });
      await until(async () => seen.started === 1);
      const [listed] = (await runtime.executions({ status: "running" })).items;
      const report = await runtime.cancel({ executionId: listed!.id, reason: "too slow" });
      expect(report.result).toBe("cancelled");
      expect(seen.aborted).toEqual(["cancelled: too slow"]);
      // The call counts against the pass's limit: its deadline is the pass's, not later.
      expect(seen.deadlines[0]).toBeGreaterThanOrEqual(before + 30_000);
      expect(seen.deadlines[0]).toBeLessThanOrEqual(Date.now() + 30_000);
      const outcome = await execution;
      expectStatus(outcome, "error");
      expect(outcome.code).toBe("CANCELLED");
      // R-RP-7: the call that was running when the pass stopped finished and was recorded.
      expect(outcome.calls?.map((call) => [call.seq, call.state])).toEqual([[0, "error"]]);
    });
  });
}

describe("cancel with sandbox threads", () => {
  it("R-MCP-T: a pass that never yields in a sandbox thread is stopped: the abort crosses to the thread", async () => {
    const runtime = createCodemodeRuntime({ sandboxThreads: 1, logger: { warn() {} } });
    try {
      const submitted = await runtime.submit({ code: "async () => { for (;;) {} }" });
      if ("status" in submitted) throw new Error(`not submitted: ${submitted.error}`);
      const running = runtime.recover({ executionId: submitted.executionId });
      await until(async () => runtime.load().passesInFlight > 0);
      expect(await runtime.cancel({ executionId: submitted.executionId })).toMatchObject({ result: "cancelled" });
      const [outcome] = await running;
      expectStatus(outcome, "error");
      expect(outcome.code).toBe("CANCELLED");
      // The thread is free again: the next pass runs.
      expect(await runtime.execute({ code: "async () => 2" })).toMatchObject({ status: "completed", result: 2 });
    } finally {
      await runtime.close();
    }
  });
});
