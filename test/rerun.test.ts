/**
 * `runtime.rerun`: failed runs run again in bulk, each as a new pass of its own run, on memory,
 * SQLite, Redis and PostgreSQL (the last two fail in CI when the service is missing, skip
 * elsewhere). The outage is simulated under the runtime, in the store itself: for a moment it
 * refuses the write of a call's result and recovers at once, so the run ends `error` with
 * STORAGE_ERROR, its record consistent (R-ST-5).
 */
import { randomUUID } from "node:crypto";
import { type CodemodeRuntime, createCodemodeRuntime, defineConnector, type ExecutionState } from "@codemode/core";
import { describe, expect, it } from "vitest";
import { closedAfterEach, expectStatus, STORES, serviceCheck } from "./four-stores-fixtures.ts";
import { type Outage, withOutage } from "./outage-fixtures.ts";

/** Three writes to a ledger. */
const PROGRAM = `async () => {
  const out = [];
  for (let n = 0; n < 3; n++) out.push((await ledger.write({ n })).n);
  return out;
}`;

/** A run of PROGRAM that the outage fails while its second call's result is stored. */
async function failedByOutage(runtime: CodemodeRuntime, outage: Outage): Promise<string> {
  outage.armAt = 1;
  const outcome = await runtime.execute({ code: PROGRAM });
  expect([outage.armAt, outage.refuseWrites]).toEqual([undefined, 0]);
  expectStatus(outcome, "error");
  expect(outcome.code).toBe("STORAGE_ERROR");
  const state = await runtime.execution(outcome.executionId);
  expect(state).toMatchObject({ status: "error", errorCode: "STORAGE_ERROR" });
  return outcome.executionId;
}

for (const store of STORES) {
  describe(`runtime.rerun on ${store.name}`, () => {
    const cannotRun = serviceCheck(store);
    const opened = closedAfterEach();

    /** A runtime over a store with an outage switch; `calls` has every tool call's n and idempotency key. */
    function ledgerRuntime(options: { failOnce?: Set<number> } = {}) {
      const raw = store.open(`codemode-rerun-${randomUUID().slice(0, 8)}`);
      opened.push(raw);
      const { storage, outage } = withOutage(raw);
      const calls: Array<{ n: number; key: string }> = [];
      const ledger = defineConnector({
        name: "ledger",
        tools: {
          write: {
            execute: async (args: { n: number }, ctx) => {
              calls.push({ n: args.n, key: ctx.idempotencyKey });
              // The outage starts while this write runs: its result cannot be stored.
              if (args.n === outage.armAt) {
                outage.refuseWrites = 1;
                delete outage.armAt;
              }
              if (options.failOnce?.delete(args.n)) throw new Error(`ledger ${args.n} is unavailable`);
              return { n: args.n };
            },
          },
        },
      });
      const runtime = createCodemodeRuntime({ connectors: [ledger], storage, logger: { warn() {} } });
      opened.unshift(runtime);
      return { runtime, outage, calls };
    }

    it("a bulk rerun after a simulated outage brings every failed run to its end; a dry run first changes nothing", async () => {
      if (cannotRun()) return;
      const { runtime, outage, calls } = ledgerRuntime();
      const failed: string[] = [];
      for (let run = 0; run < 4; run++) failed.push(await failedByOutage(runtime, outage));
      // A run its program failed is not the outage's: the default rerun leaves it alone.
      const thrown = await runtime.execute({
        code: "async () => { await ledger.write({ n: 7 }); throw new Error('bad input'); }",
      });
      expectStatus(thrown, "error");
      expect(thrown.code).toBe("PROGRAM_ERROR");
      const completed = await runtime.execute({ code: PROGRAM });
      expectStatus(completed, "completed");

      const before = new Map<string, ExecutionState | null>();
      for (const id of [...failed, thrown.executionId]) before.set(id, await runtime.execution(id));
      const callsBefore = calls.length;

      const dry = await runtime.rerun({ status: "error", dryRun: true });
      expect(dry.dryRun).toBe(true);
      expect(dry.results.map((result) => result.executionId).sort()).toEqual([...failed].sort());
      for (const result of dry.results)
        expect(result).toMatchObject({ action: "would-rerun", failed: { code: "STORAGE_ERROR" } });
      expect((await runtime.rerun({ dryRun: true, since: Date.now() + 60_000 })).results).toEqual([]);
      expect((await runtime.rerun({ dryRun: true, limit: 2 })).results).toHaveLength(2);
      expect((await runtime.rerun({ dryRun: true, codes: ["PROGRAM_ERROR"] })).results).toMatchObject([
        { executionId: thrown.executionId, action: "would-rerun", failed: { code: "PROGRAM_ERROR" } },
      ]);
      for (const [id, state] of before) expect(await runtime.execution(id)).toEqual(state);
      expect(calls.length).toBe(callsBefore);

      const report = await runtime.rerun({ status: "error" });
      expect(report.dryRun).toBe(false);
      expect(report.results.map((result) => result.executionId).sort()).toEqual([...failed].sort());
      for (const result of report.results) {
        expect(result).toMatchObject({ action: "rerun", failed: { code: "STORAGE_ERROR" } });
        expectStatus(result.outcome, "completed");
        expect(result.outcome.result).toEqual([0, 1, 2]);
      }
      for (const id of failed) {
        const state = await runtime.execution(id);
        expect(state).toMatchObject({ status: "completed", result: [0, 1, 2] });
        expect(state?.errorCode).toBeUndefined();
        expect(state?.reruns).toEqual([{ at: expect.any(Number), code: "STORAGE_ERROR", error: expect.any(String) }]);
        expect(state?.log.map((entry) => [entry.seq, entry.state])).toEqual([
          [0, "applied"],
          [1, "applied"],
          [2, "applied"],
        ]);
        // Seq 0 replayed; seq 1, whose result was never stored, ran again with the same key (R-RP-4); seq 2 ran once.
        const keys = calls.filter((call) => call.key.startsWith(`${id}:`)).map((call) => call.key);
        expect(keys).toEqual([`${id}:0`, `${id}:1`, `${id}:1`, `${id}:2`]);
      }
      expect(await runtime.execution(thrown.executionId)).toEqual(before.get(thrown.executionId));
      // Nothing failed by the store is left.
      expect((await runtime.rerun()).results).toEqual([]);
      expect((await runtime.executions({ status: "error" })).items.map((item) => item.id)).toEqual([
        thrown.executionId,
      ]);
    });

    it("a run its program failed on a recorded tool error fails the same way again (R-CON-3); a fork from that seq runs it live", async () => {
      if (cannotRun()) return;
      const { runtime, calls } = ledgerRuntime({ failOnce: new Set([2]) });
      const first = await runtime.execute({ code: PROGRAM });
      expectStatus(first, "error");
      expect(first.error).toContain("ledger 2 is unavailable");

      const again = await runtime.rerun({ executionId: first.executionId });
      expect(again.results).toHaveLength(1);
      const [result] = again.results;
      expect(result).toMatchObject({ action: "rerun", failed: { code: "PROGRAM_ERROR" } });
      expectStatus(result?.outcome, "error");
      expect(result?.outcome.error).toContain("ledger 2 is unavailable");
      expect(calls.filter((call) => call.n === 2)).toHaveLength(1);
      expect((await runtime.execution(first.executionId))?.reruns).toHaveLength(1);

      const forked = await runtime.fork({ executionId: first.executionId, fromSeq: 2 });
      expectStatus(forked, "completed");
      expect(forked.result).toEqual([0, 1, 2]);
    });

    it("two reruns of one run at once: one pass runs it, the other is skipped; unknown and changed runs are skipped, not thrown", async () => {
      if (cannotRun()) return;
      const { runtime, outage, calls } = ledgerRuntime();
      const id = await failedByOutage(runtime, outage);
      // Its seq 1 was left under way: a fork past it is refused until the run is rerun.
      expect(await runtime.fork({ executionId: id, fromSeq: 2 })).toMatchObject({
        status: "error",
        code: "NOT_PAUSED",
        error: expect.stringContaining("seq 1 (ledger.write) was left under way"),
      });
      const [one, two] = await Promise.all([runtime.rerun({ executionId: id }), runtime.rerun({ executionId: id })]);
      const results = [...one.results, ...two.results];
      expect(results.map((result) => result.action).sort()).toEqual(["rerun", "skipped"]);
      const skip = results.find((result) => result.action === "skipped");
      expect(["BUSY", "NOT_PAUSED"]).toContain(skip?.reason?.code);
      expect(calls.filter((call) => call.key === `${id}:2`)).toHaveLength(1);

      expect((await runtime.rerun({ executionId: id })).results).toMatchObject([
        { action: "skipped", reason: { code: "NOT_PAUSED", message: expect.stringContaining("is completed") } },
      ]);
      expect((await runtime.rerun({ executionId: "no-such-run" })).results).toMatchObject([
        { executionId: "no-such-run", action: "skipped", reason: { code: "NOT_FOUND" } },
      ]);
    });
  });
}

describe("runtime.rerun refuses what it cannot do", () => {
  it("a query it cannot read, or a code that would fail the same way, is a TypeError that says what to do", async () => {
    const runtime = createCodemodeRuntime({});
    try {
      await expect(runtime.rerun({ codes: ["SYNTAX_ERROR"] })).rejects.toThrow(/fail the same way again; fork them/);
      await expect(runtime.rerun({ codes: ["OOPS" as never] })).rejects.toThrow(/codes must be error codes/);
      await expect(runtime.rerun({ codes: [] })).rejects.toThrow(/non-empty array/);
      await expect(runtime.rerun({ status: "paused" as never })).rejects.toThrow(/status must be one of error/);
      await expect(runtime.rerun({ limit: 5_000 })).rejects.toThrow(/limit must be an integer from 1 to 1000/);
      await expect(runtime.rerun({ executionId: "" })).rejects.toThrow(/executionId must be a non-empty string/);
      await expect(runtime.rerun(null as never)).rejects.toThrow(/query must be/);
    } finally {
      await runtime.close();
    }
  });

  it("a run whose connector this runtime lacks is skipped with MISSING_CONNECTOR and left failed", async () => {
    const { memoryStorage } = await import("@codemode/storage/memory");
    const storage = memoryStorage();
    const { storage: flaky, outage } = withOutage(storage);
    const ledger = defineConnector({
      name: "ledger",
      tools: { write: { execute: async (args: { n: number }) => args } },
    });
    const full = createCodemodeRuntime({ connectors: [ledger], storage: flaky, logger: { warn() {} } });
    const bare = createCodemodeRuntime({ storage: flaky, logger: { warn() {} } });
    try {
      outage.refuseWrites = 1;
      const failed = await full.execute({ code: PROGRAM });
      expectStatus(failed, "error");
      expect(failed.code).toBe("STORAGE_ERROR");
      for (const dryRun of [true, false]) {
        const report = await bare.rerun({ dryRun });
        expect(report.results).toMatchObject([
          { executionId: failed.executionId, action: "skipped", reason: { code: "MISSING_CONNECTOR" } },
        ]);
        expect(report.results[0]?.reason?.message).toContain("rerun it from a runtime that has them");
      }
      expect(await full.execution(failed.executionId)).toMatchObject({ status: "error", errorCode: "STORAGE_ERROR" });
      expectStatus((await full.rerun()).results[0]?.outcome, "completed");
    } finally {
      await bare.close();
      await full.close();
      await storage.close();
    }
  });
});
