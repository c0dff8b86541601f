/**
 * Replay stories (R-RP-*): an execution pauses at an approval-gated call, `approve` runs the same
 * code again from the top, and every earlier call must come back from the log, not the connector.
 * This file: sequence numbers (R-RP-1), divergence (R-RP-2) and replaying recorded calls (R-RP-3).
 * Interrupted calls are in replay-interrupted.test.ts, steps and replay-stable clock and randomness
 * in replay-steps.test.ts, pauses among concurrent calls in replay-concurrent.test.ts.
 */
import { describe, expect, it } from "vitest";
import { expectCompleted, expectError, expectPaused } from "./outcome-fixtures.ts";
import { closeRuntimesAfterEach, setup } from "./replay-fixtures.ts";

closeRuntimesAfterEach();

describe("sequence numbers (R-RP-1)", () => {
  it("R-RP-1: calls and steps take seqs in the order the program issues them, concurrent ones included", async () => {
    const { runtime, calls } = setup();
    const outcome = expectCompleted(
      await runtime.execute({
        code: `async () => {
          await shop.read({ n: 1 });
          const s = await codemode.step("five", () => 5);
          const [a, b] = await Promise.all([shop.read({ n: 2, delayMs: 30 }), shop.read({ n: 3 })]);
          await shop.write({ n: s });
          return [a.value, b.value];
        }`,
      }),
    );
    expect(outcome.result).toEqual([20, 30]);
    expect(outcome.calls!.map((entry) => [entry.seq, `${entry.connector}.${entry.method}`, entry.state])).toEqual([
      [0, "shop.read", "applied"],
      [1, "codemode.step", "applied"],
      [2, "shop.read", "applied"],
      [3, "shop.read", "applied"],
      [4, "shop.write", "applied"],
    ]);
    expect(outcome.calls![2]!.args).toEqual({ n: 2, delayMs: 30 });
    expect(outcome.calls![3]!.args).toEqual({ n: 3 });
    expect(calls.read!.map((call) => call.context.seq)).toEqual([0, 2, 3]);
    expect(calls.write![0]!.context.seq).toBe(4);
  });

  it("R-RP-1 R-RP-5: calls inside a step's fn take seqs too, and the step replays past them after approve", async () => {
    const { runtime, count, calls } = setup();
    const paused = expectPaused(
      await runtime.execute({
        code: `async () => {
          const total = await codemode.step("total", async () => (await shop.read({ n: 4 })).value + (await shop.read({ n: 5 })).value);
          const order = await shop.create_order({ total });
          return { total, order };
        }`,
      }),
    );
    expect(paused.pending[0]).toMatchObject({ seq: 3, method: "create_order", args: { total: 90 } });
    expect(paused.calls!.map((entry) => [entry.seq, entry.method])).toEqual([
      [0, "step"],
      [1, "read"],
      [2, "read"],
      [3, "create_order"],
    ]);
    const done = expectCompleted(await runtime.approve({ executionId: paused.executionId }));
    expect(done.result).toEqual({ total: 90, order: { orderId: "o-1" } });
    expect(count("read")).toBe(2);
    expect(calls.create_order![0]!.context.seq).toBe(3);
  });
});

describe("divergence (R-RP-2)", () => {
  const randomOrder = `async () => {
    await shop.list_items();
    const n = Math.random();
    return shop.create_order({ n });
  }`;

  it("R-RP-2 R-SB-6: Math.random with deterministic: false builds other args after approve: REPLAY_DIVERGENCE at seq 1, suggesting codemode.step", async () => {
    const { runtime, count } = setup({ deterministic: false });
    const paused = expectPaused(await runtime.execute({ code: randomOrder }));
    expect(paused.pending[0]!.seq).toBe(1);
    const failed = expectError(await runtime.approve({ executionId: paused.executionId }));
    expect(failed.code).toBe("REPLAY_DIVERGENCE");
    expect(failed.error).toContain("seq 1");
    expect(failed.error).toContain("shop.create_order");
    expect(failed.error).toContain("codemode.step");
    expect(failed.executionId).toBe(paused.executionId);
    expect(count("create_order")).toBe(0);
    expect(count("list_items")).toBe(1);
    const state = await runtime.execution(paused.executionId);
    expect(state?.status).toBe("error");
    expect(state?.errorCode).toBe("REPLAY_DIVERGENCE");
  });

  it("R-RP-2 R-SB-6: the same code with the default deterministic globals completes with the args shown at the pause", async () => {
    const { runtime, calls } = setup();
    const paused = expectPaused(await runtime.execute({ code: randomOrder }));
    const done = expectCompleted(await runtime.approve({ executionId: paused.executionId }));
    expect(done.result).toEqual({ orderId: "o-1" });
    expect(calls.create_order).toHaveLength(1);
    expect(calls.create_order![0]!.args).toEqual(paused.pending[0]!.args);
  });

  it("R-RP-2: another method at the pending seq after approve diverges, naming both methods, and runs neither", async () => {
    const { runtime, count } = setup();
    const paused = expectPaused(
      await runtime.execute({
        code: `async () => {
          const pass = await shop.pass_number();
          if (pass === 1) return shop.create_order({ sku: "a" });
          return shop.cancel_order({ sku: "a" });
        }`,
      }),
    );
    const failed = expectError(await runtime.approve({ executionId: paused.executionId }));
    expect(failed.code).toBe("REPLAY_DIVERGENCE");
    expect(failed.error).toContain("seq 1");
    expect(failed.error).toContain("shop.cancel_order");
    expect(failed.error).toContain("shop.create_order");
    expect(count("create_order") + count("cancel_order")).toBe(0);
  });

  it("R-RP-2: an applied call issued with other arguments on the next pass diverges, showing both", async () => {
    const { runtime, count } = setup();
    const paused = expectPaused(
      await runtime.execute({
        code: `async () => {
          const pass = await shop.pass_number();
          await shop.read({ n: pass });
          return shop.create_order({ sku: "a" });
        }`,
      }),
    );
    const failed = expectError(await runtime.approve({ executionId: paused.executionId }));
    expect(failed.code).toBe("REPLAY_DIVERGENCE");
    expect(failed.error).toContain("seq 1");
    expect(failed.error).toContain('{"n":2}');
    expect(failed.error).toContain('{"n":1}');
    expect(count("read")).toBe(1);
    expect(count("create_order")).toBe(0);
    expect(failed.calls!.find((entry) => entry.seq === 2)?.state).toBe("pending");
  });

  it("R-RP-2: the same arguments built in another key order on the next pass do not diverge", async () => {
    const { runtime, calls, count } = setup();
    const paused = expectPaused(
      await runtime.execute({
        code: `async () => {
          const pass = await shop.pass_number();
          const filter = pass === 1 ? { n: 7, where: { a: 1, b: [1, { x: 1, y: 2 }] } } : { where: { b: [1, { y: 2, x: 1 }], a: 1 }, n: 7 };
          await shop.read(filter);
          const order = pass === 1 ? { sku: "a", qty: 2, note: { to: "ann", gift: true } } : { note: { gift: true, to: "ann" }, qty: 2, sku: "a" };
          return shop.create_order(order);
        }`,
      }),
    );
    const done = expectCompleted(await runtime.approve({ executionId: paused.executionId }));
    expect(done.result).toEqual({ orderId: "o-1" });
    expect(count("pass_number")).toBe(2);
    expect(count("read")).toBe(1);
    expect(calls.create_order![0]!.args).toEqual({ sku: "a", qty: 2, note: { to: "ann", gift: true } });
  });
});

describe("replaying recorded calls (R-RP-3, R-CON-3)", () => {
  it("R-RP-3: applied calls replay their recorded results after approve without calling execute again", async () => {
    const { runtime, count } = setup();
    const paused = expectPaused(
      await runtime.execute({
        code: `async () => {
          const items = await shop.list_items();
          const extra = await shop.read({ n: 3 });
          const order = await shop.create_order({ item: items[0].id });
          return { listing: items[0].listing, extra: extra.value, order };
        }`,
      }),
    );
    expect(count("list_items")).toBe(1);
    const done = expectCompleted(await runtime.approve({ executionId: paused.executionId }));
    // A second execution would answer listing 2: the value is the recorded one.
    expect(done.result).toEqual({ listing: 1, extra: 30, order: { orderId: "o-1" } });
    expect(count("list_items")).toBe(1);
    expect(count("read")).toBe(1);
    expect(count("create_order")).toBe(1);
    expect(done.calls!.map((entry) => entry.state)).toEqual(["applied", "applied", "applied"]);
    expect(done.calls![0]!.result).toEqual([
      { id: 1, name: "pen", listing: 1 },
      { id: 2, name: "cup", listing: 1 },
    ]);
  });

  it("R-CON-3 R-RP-3: a thrown error is logged and replays as the same rejection after approve, without calling the tool again", async () => {
    const { runtime, count } = setup();
    const code = `async () => {
      let message = "none";
      try {
        await shop.flaky({ sku: "a" });
      } catch (error) {
        message = error.message;
      }
      const order = await shop.create_order({ note: message });
      return { message, order };
    }`;
    const paused = expectPaused(await runtime.execute({ code }));
    expect(paused.pending[0]!.args).toEqual({ note: "warehouse offline (attempt 1)" });
    expect(paused.calls![0]).toMatchObject({
      seq: 0,
      method: "flaky",
      state: "error",
      error: "warehouse offline (attempt 1)",
    });
    const done = expectCompleted(await runtime.approve({ executionId: paused.executionId }));
    expect(done.result).toEqual({ message: "warehouse offline (attempt 1)", order: { orderId: "o-1" } });
    expect(count("flaky")).toBe(1);
  });

  it("R-CON-3: an uncaught tool error ends the execution with its message", async () => {
    const { runtime } = setup();
    const failed = expectError(
      await runtime.execute({ code: `async () => { await shop.flaky({}); return "unreachable"; }` }),
    );
    expect(failed.code).toBe("PROGRAM_ERROR");
    expect(failed.error).toContain("warehouse offline (attempt 1)");
    expect(failed.calls![0]).toMatchObject({ state: "error", error: "warehouse offline (attempt 1)" });
  });

  it("R-RP-3: a replay: reexecute tool runs again on every pass and keeps no result", async () => {
    const { runtime, count } = setup();
    const paused = expectPaused(
      await runtime.execute({
        code: `async () => {
          const pass = await shop.pass_number();
          await shop.create_order({ sku: "a" });
          await shop.create_order({ sku: "b" });
          return pass;
        }`,
      }),
    );
    expect(count("pass_number")).toBe(1);
    expect(paused.calls![0]).toMatchObject({ seq: 0, method: "pass_number", ephemeral: true, state: "applied" });
    expect(paused.calls![0]!.result).toBeUndefined();
    expectPaused(await runtime.approve({ executionId: paused.executionId }));
    expect(count("pass_number")).toBe(2);
    const done = expectCompleted(await runtime.approve({ executionId: paused.executionId }));
    expect(count("pass_number")).toBe(3);
    // The program saw the live value of the last pass.
    expect(done.result).toBe(3);
  });
});
