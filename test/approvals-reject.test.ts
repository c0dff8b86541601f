/**
 * Approve and reject on executions that are not (or no longer) waiting: only a paused execution
 * can be approved, and a stale seq is refused (R-AP-3, R-AP-7); reject ends a run once, keeps what
 * already applied, and records who and why (R-AP-4, R-AP-7).
 */
import { createCodemodeRuntime, defineConnector } from "@codemode/core";
import { describe, expect, it } from "vitest";
import { closeRuntimesAfterEach, ORDER_CODE, setup, track } from "./approvals-fixtures.ts";
import { expectCompleted, expectError, expectPaused } from "./outcome-fixtures.ts";

closeRuntimesAfterEach();

describe("only a paused execution can be approved (R-AP-3, R-AP-7)", () => {
  it("R-AP-3: approving a completed execution returns NOT_PAUSED and runs nothing", async () => {
    const { runtime, count } = setup();
    const paused = expectPaused(await runtime.execute({ code: ORDER_CODE }));
    expectCompleted(await runtime.approve({ executionId: paused.executionId }));
    const again = expectError(await runtime.approve({ executionId: paused.executionId }), "NOT_PAUSED");
    expect(again.executionId).toBe(paused.executionId);
    expect(again.error).toContain("completed");
    expect(count("create_order")).toBe(1);
    expect(count("list_items")).toBe(1);
    expect((await runtime.execution(paused.executionId))?.status).toBe("completed");
  });

  it("R-AP-3: approving an errored execution returns NOT_PAUSED and runs nothing", async () => {
    const { runtime, count } = setup();
    const failed = expectError(
      await runtime.execute({ code: `async () => { await shop.list_items(); throw new Error("bad plan"); }` }),
      "PROGRAM_ERROR",
    );
    expectError(await runtime.approve({ executionId: failed.executionId }), "NOT_PAUSED");
    expect(count("list_items")).toBe(1);
    expect((await runtime.execution(failed.executionId))?.status).toBe("error");
  });

  it("R-AP-3 R-AP-4: approving a rejected execution returns NOT_PAUSED and runs nothing", async () => {
    const { runtime, count } = setup();
    const paused = expectPaused(await runtime.execute({ code: ORDER_CODE }));
    expect(await runtime.reject({ executionId: paused.executionId, seq: 1 })).toBe(true);
    expectError(await runtime.approve({ executionId: paused.executionId }), "NOT_PAUSED");
    expect(count("create_order")).toBe(0);
    expect((await runtime.execution(paused.executionId))?.status).toBe("rejected");
  });

  it("R-AP-3: approving a rolled-back execution returns NOT_PAUSED and runs nothing", async () => {
    const { runtime, count, reverts } = setup();
    const paused = expectPaused(
      await runtime.execute({
        code: `async () => { await shop.charge({ amount: 5 }); return shop.create_order({ item: 1 }); }`,
      }),
    );
    const report = await runtime.rollback({ executionId: paused.executionId });
    expect(report.reverted).toEqual([0]);
    expect(reverts).toEqual(['charge {"amount":5}']);
    expect(report.status).toBe("rolled_back");
    expectError(await runtime.approve({ executionId: paused.executionId }), "NOT_PAUSED");
    expect(count("create_order")).toBe(0);
    expect(count("charge")).toBe(1);
  });

  it("R-AP-3: approving an unknown id returns NOT_FOUND with that id", async () => {
    const { runtime } = setup();
    const outcome = expectError(await runtime.approve({ executionId: "no-such-execution" }), "NOT_FOUND");
    expect(outcome.executionId).toBe("no-such-execution");
    expect(outcome.error).toContain("no-such-execution");
  });

  it("R-AP-3 R-AP-6 R-RT-2: approving an execution whose pass is still running does not start a second pass", async () => {
    let release!: () => void;
    let started!: (executionId: string) => void;
    const running = new Promise<string>((resolve) => (started = resolve));
    let executions = 0;
    const slow = defineConnector({
      name: "slow",
      tools: {
        wait: {
          execute: async (_args, context) => {
            executions += 1;
            started(context.executionId);
            await new Promise<void>((resolve) => (release = resolve));
            return "done";
          },
        },
      },
    });
    const runtime = track(createCodemodeRuntime({ connectors: [slow], lockWaitMs: 20, limits: { timeoutMs: 5_000 } }));
    const first = runtime.execute({ code: `async () => slow.wait({})` });
    const executionId = await running;
    const approval = await runtime.approve({ executionId });
    expect(approval.status).toBe("error");
    expect(["BUSY", "NOT_PAUSED"]).toContain((approval as { code: string }).code);
    expect(approval.executionId).toBe(executionId);
    // R-RT-2: the refusal still carries the log as it stands: the call in flight.
    expect(approval.calls?.map((entry) => [entry.seq, entry.method, entry.state])).toEqual([[0, "wait", "executing"]]);
    release();
    const done = expectCompleted(await first);
    expect(done.result).toBe("done");
    expect(executions).toBe(1);
  });

  it("R-AP-7: approve with a stale seq returns NOT_PAUSED naming the pending seq; the right seq then completes", async () => {
    const { runtime, count } = setup();
    const paused = expectPaused(await runtime.execute({ code: ORDER_CODE }));
    const stale = expectError(await runtime.approve({ executionId: paused.executionId, seq: 0 }), "NOT_PAUSED");
    expect(stale.error).toContain("seq 1");
    expect(count("create_order")).toBe(0);
    expect((await runtime.execution(paused.executionId))?.status).toBe("paused");
    const done = expectCompleted(await runtime.approve({ executionId: paused.executionId, seq: 1 }));
    expect(done.result).toBe("o-1");
  });

  it("R-AP-7: approve records by and reason on the approved entry", async () => {
    const { runtime } = setup();
    const paused = expectPaused(await runtime.execute({ code: ORDER_CODE }));
    const done = expectCompleted(
      await runtime.approve({ executionId: paused.executionId, seq: 1, by: "ann", reason: "within budget" }),
    );
    expect(done.calls![1]!.decision).toMatchObject({ approved: true, by: "ann", reason: "within budget" });
    expect(typeof done.calls![1]!.decision!.at).toBe("number");
    const stored = await runtime.execution(paused.executionId);
    expect(stored?.log[1]).toMatchObject({
      state: "applied",
      decision: { approved: true, by: "ann", reason: "within budget" },
    });
  });
});

describe("reject (R-AP-4, R-AP-7)", () => {
  it("R-AP-4 R-AP-7: reject ends the execution rejected, keeps earlier applied calls, and records by and reason", async () => {
    const { runtime, count, reverts } = setup();
    const paused = expectPaused(
      await runtime.execute({
        code: `async () => { await shop.charge({ amount: 5 }); return shop.create_order({ item: 1 }); }`,
      }),
    );
    const executionId = paused.executionId;
    expect(await runtime.reject({ executionId, seq: 1, by: "bob", reason: "too expensive" })).toBe(true);
    const stored = await runtime.execution(executionId);
    expect(stored?.status).toBe("rejected");
    expect(stored?.log[0]).toMatchObject({ seq: 0, method: "charge", state: "applied", result: { chargeId: "ch-1" } });
    expect(stored?.log[1]).toMatchObject({
      seq: 1,
      method: "create_order",
      state: "error",
      decision: { approved: false, by: "bob", reason: "too expensive" },
    });
    expect(stored?.log[1]?.error).toContain("too expensive");
    expect(reverts).toEqual([]);
    expect(count("create_order")).toBe(0);
    expect((await runtime.pending()).items).toEqual([]);
  });

  it("R-AP-4: reject returns true once, then false and changes nothing", async () => {
    const { runtime } = setup();
    const paused = expectPaused(await runtime.execute({ code: ORDER_CODE }));
    expect(await runtime.reject({ executionId: paused.executionId, seq: 1, by: "bob" })).toBe(true);
    const before = await runtime.execution(paused.executionId);
    expect(await runtime.reject({ executionId: paused.executionId, seq: 1, by: "carol", reason: "again" })).toBe(false);
    const after = await runtime.execution(paused.executionId);
    expect(after).toEqual(before);
    expect(after?.log[1]?.decision).toMatchObject({ approved: false, by: "bob" });
  });

  it("R-AP-4: reject of another seq, an unknown id or a completed execution returns false and changes nothing", async () => {
    const { runtime } = setup();
    const paused = expectPaused(await runtime.execute({ code: ORDER_CODE }));
    expect(await runtime.reject({ executionId: paused.executionId, seq: 0 })).toBe(false);
    expect(await runtime.reject({ executionId: "no-such-execution", seq: 1 })).toBe(false);
    expect((await runtime.execution(paused.executionId))?.status).toBe("paused");
    expectCompleted(await runtime.approve({ executionId: paused.executionId }));
    expect(await runtime.reject({ executionId: paused.executionId, seq: 1 })).toBe(false);
    const stored = await runtime.execution(paused.executionId);
    expect(stored?.status).toBe("completed");
    expect(stored?.log[1]).toMatchObject({ state: "applied", decision: { approved: true } });
  });

  it("R-AP-4 R-AP-3: after a divergence leaves the approved entry pending, reject and approve both refuse and the record stays error", async () => {
    const { runtime, count } = setup({ deterministic: false });
    const paused = expectPaused(
      await runtime.execute({ code: `async () => shop.create_order({ item: Math.random() })` }),
    );
    expectError(await runtime.approve({ executionId: paused.executionId }), "REPLAY_DIVERGENCE");
    const before = await runtime.execution(paused.executionId);
    expect(before?.log[0]?.state).toBe("pending");
    expect(await runtime.reject({ executionId: paused.executionId, seq: 0 })).toBe(false);
    expectError(await runtime.approve({ executionId: paused.executionId, seq: 0 }), "NOT_PAUSED");
    expect(await runtime.execution(paused.executionId)).toEqual(before);
    expect(before?.status).toBe("error");
    expect(count("create_order")).toBe(0);
  });
});
