/**
 * `runtime.cancel` (R-MCP-T: tasks/cancel rejects a paused run, or stops a running pass and ends
 * the run), on memory, SQLite, Redis and PostgreSQL: a paused run, a program that never yields,
 * a long tool call told through its signal, a run running in another runtime on the same store
 * (it reads the request from the store), a run nobody runs, and the answers for ended and unknown
 * runs. Real child processes cancel across processes in mcp-tasks.test.ts.
 */
import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import {
  type CodemodeRuntime,
  type CodemodeRuntimeOptions,
  createCodemodeRuntime,
  defineConnector,
} from "@codemode/core";
import type { CodemodeStorage } from "@codemode/storage";
import { afterEach, describe, expect, it } from "vitest";
import { expectStatus, STORES, serviceCheck } from "./four-stores-fixtures.ts";

for (const store of STORES) {
  describe(`cancel on ${store.name}`, () => {
    const cannotRun = serviceCheck(store);
    const opened: Array<{ close(): Promise<unknown> }> = [];
    afterEach(async () => {
      for (const each of opened.splice(0).reverse()) await each.close().catch(() => undefined);
    });

    /** A runtime whose `jobs.wait` waits until its signal aborts (or 60 s); `seen` has what the tool saw. */
    function jobsRuntime(options: Partial<CodemodeRuntimeOptions> & { storage?: CodemodeStorage } = {}) {
      const storage = options.storage ?? store.open(`codemode-cancel-${randomUUID().slice(0, 8)}`);
      if (!options.storage) opened.push(storage);
      const seen = { started: 0, aborted: [] as string[], deadlines: [] as number[] };
      const jobs = defineConnector({
        name: "jobs",
        tools: {
          wait: {
            execute: (_args: unknown, context) =>
              new Promise((resolve, reject) => {
                seen.started++;
                if (context.deadline !== undefined) seen.deadlines.push(context.deadline);
                const timer = setTimeout(() => resolve("done"), 60_000);
                context.signal?.addEventListener("abort", () => {
                  clearTimeout(timer);
                  seen.aborted.push(String(context.signal?.reason));
                  reject(new Error("stopped: the run was cancelled"));
                });
              }),
          },
          pay: { requiresApproval: true, execute: () => "paid" },
        },
      });
      const runtime = createCodemodeRuntime({
        connectors: [jobs],
        storage,
        logger: { warn() {} },
        limits: { timeoutMs: 30_000 },
        ...options,
      });
      opened.unshift(runtime);
      return { runtime, seen, storage };
    }

    async function statusOf(runtime: CodemodeRuntime, executionId: string) {
      return (await runtime.execution(executionId))?.status;
    }

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

async function until(check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error("timed out waiting");
    await sleep(20);
  }
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
