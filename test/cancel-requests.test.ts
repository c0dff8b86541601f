/**
 * `runtime.cancel` through the store (R-MCP-T), on memory, SQLite, Redis and PostgreSQL: a run
 * another runtime runs on the same store reads the request and stops, a submitted run nobody
 * started ends at once, a malformed request in the store stops nothing; and the answers for a run
 * cancelled twice, an ended run and an unknown id.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { until, useJobs } from "./cancel-fixtures.ts";
import { expectStatus, STORES } from "./four-stores-fixtures.ts";

for (const store of STORES) {
  describe(`cancel on ${store.name}`, () => {
    const { cannotRun, jobsRuntime, statusOf } = useJobs(store);

    it("R-MCP-T: a run another runtime runs on the same store reads the request and stops", async () => {
      if (cannotRun()) return;
      const host = jobsRuntime();
      const other = jobsRuntime({ storage: host.storage });
      const execution = host.runtime.execute({ code: "async () => { await jobs.wait({}); return 'finished'; }" });
      await until(async () => host.seen.started === 1);
      const [listed] = (await other.runtime.executions({ status: "running" })).items;

      // Asked to wait no time, the other runtime leaves a request: the host reads it within a second.
      const report = await other.runtime.cancel({ executionId: listed!.id, by: "operator", waitMs: 0 });
      expect(report).toEqual({ executionId: listed!.id, result: "requested", status: "running" });
      const outcome = await execution;
      expectStatus(outcome, "error");
      expect(outcome.code).toBe("CANCELLED");
      expect(host.seen.aborted).toEqual(["cancelled by operator"]);
      expect(await other.runtime.cancel({ executionId: listed!.id })).toMatchObject({ result: "ended" });

      // With the default wait, the answer comes once the run has ended.
      const second = host.runtime.execute({ code: "async () => { for (;;) {} }" });
      await until(async () => host.runtime.load().passesInFlight > 0);
      const [again] = (await other.runtime.executions({ status: "running" })).items;
      expect(await other.runtime.cancel({ executionId: again!.id })).toMatchObject({ result: "cancelled" });
      expect((await second).status).toBe("error");
    });

    it("R-MCP-T: a submitted run nobody started ends at once and is not recovered later", async () => {
      if (cannotRun()) return;
      const { runtime, seen } = jobsRuntime();
      const submitted = await runtime.submit({ code: "async () => jobs.wait({})" });
      if ("status" in submitted) throw new Error(`not submitted: ${submitted.error}`);
      expect(await runtime.cancel({ executionId: submitted.executionId })).toMatchObject({ result: "cancelled" });
      expect(await runtime.recover({ executionId: submitted.executionId })).toEqual([]);
      expect(seen.started).toBe(0);
    });

    it("R-MCP-T: what the store holds under a cancel key is read as hostile: a malformed request stops nothing", async () => {
      if (cannotRun()) return;
      const { runtime, storage } = jobsRuntime({ name: "cancel-hostile" });
      const submitted = await runtime.submit({
        code: "async () => { await new Promise((resolve) => setTimeout(resolve, 2500)); return 'finished'; }",
      });
      if ("status" in submitted) throw new Error(`not submitted: ${submitted.error}`);
      const key = `cm:cancel-hostile:k:${submitted.executionId}`;
      const forgeries = ['{"at":"soon"}', "[1,2]", "not json", `{"at":1,"by":"${"x".repeat(20_000)}"}`, "null"];
      // Rewritten while the pass runs, so the pass's reads (one a second) meet several of them.
      let forging = true;
      const forger = (async () => {
        for (let turn = 0; forging; turn++) {
          await storage.keyv.set(key, forgeries[turn % forgeries.length]);
          await sleep(100);
        }
      })();
      const [outcome] = await runtime.recover({ executionId: submitted.executionId });
      forging = false;
      await forger;
      expectStatus(outcome, "completed");
      expect(await statusOf(runtime, submitted.executionId)).toBe("completed");
    });

    it("R-MCP-T: cancelled twice, the second cancel answers ended: the run had ended already", async () => {
      if (cannotRun()) return;
      const { runtime } = jobsRuntime();
      const paused = await runtime.execute({ code: "async () => jobs.pay({ n: 1 })" });
      expectStatus(paused, "paused");
      expect(await runtime.cancel({ executionId: paused.executionId })).toEqual({
        executionId: paused.executionId,
        result: "cancelled",
        status: "rejected",
      });
      expect(await runtime.cancel({ executionId: paused.executionId, by: "ops" })).toEqual({
        executionId: paused.executionId,
        result: "ended",
        status: "rejected",
      });
    });

    it("R-MCP-T: an ended run or an unknown id changes nothing", async () => {
      if (cannotRun()) return;
      const { runtime } = jobsRuntime();
      const done = await runtime.execute({ code: "async () => 1" });
      expectStatus(done, "completed");
      expect(await runtime.cancel({ executionId: done.executionId })).toEqual({
        executionId: done.executionId,
        result: "ended",
        status: "completed",
      });
      expect(await statusOf(runtime, done.executionId)).toBe("completed");
      expect(await runtime.cancel({ executionId: "no-such-run" })).toEqual({
        executionId: "no-such-run",
        result: "not_found",
      });
      expect(await runtime.cancel({ executionId: 42 as never })).toMatchObject({ result: "not_found" });
    });
  });
}
