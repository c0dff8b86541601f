import {
  type CodemodeRuntime,
  type CodemodeRuntimeOptions,
  createCodemodeRuntime,
  defineConnector,
  type Outcome,
  type ToolContext,
} from "@codemode/core";
import Keyv from "keyv";
import { afterEach, describe, expect, it } from "vitest";

/**
 * Replay stories (R-RP-*): an execution pauses at an approval-gated call, `approve` runs the same
 * code again from the top, and every earlier call must come back from the log, not the connector.
 */

type Call = { args: unknown; context: ToolContext };

/** A shop whose every tool records how it was called, so a story can count real executions. */
function makeShop() {
  const calls: Record<string, Call[]> = {};
  /** Which pass is running: the first is 1, and onPassEnd moves to the next. */
  let pass = 1;
  const bets = new Map<string, string>();
  const track = (method: string, args: unknown, context: ToolContext) => {
    calls[method] ??= [];
    calls[method].push({ args, context });
    return calls[method].length;
  };
  const connector = defineConnector({
    name: "shop",
    tools: {
      list_items: {
        execute: (args, context) => {
          const count = track("list_items", args, context);
          return [
            { id: 1, name: "pen", listing: count },
            { id: 2, name: "cup", listing: count },
          ];
        },
      },
      read: {
        execute: async (args: { n: number; delayMs?: number }, context) => {
          track("read", args, context);
          if (args.delayMs) await new Promise((resolve) => setTimeout(resolve, args.delayMs));
          return { n: args.n, value: args.n * 10 };
        },
      },
      /** Delays that change from pass to pass: the order calls finish in differs between passes. */
      jittery: {
        execute: async (args: { n: number }, context) => {
          track("jittery", args, context);
          const delayMs = pass % 2 === 1 ? (6 - args.n) * 8 : args.n * 8;
          await new Promise((resolve) => setTimeout(resolve, delayMs));
          return args.n * 100;
        },
      },
      jittery_live: {
        replay: "reexecute",
        execute: async (args: { n: number }, context) => {
          track("jittery_live", args, context);
          const delayMs = pass % 2 === 1 ? (6 - args.n) * 8 : args.n * 8;
          await new Promise((resolve) => setTimeout(resolve, delayMs));
          return args.n * 1000;
        },
      },
      /** A read that runs on every pass and answers how many times it ran: differs per pass. */
      pass_number: {
        replay: "reexecute",
        execute: (args, context) => track("pass_number", args, context),
      },
      write: {
        execute: async (args: { n: number; delayMs?: number }, context) => {
          if (args.delayMs) await new Promise((resolve) => setTimeout(resolve, args.delayMs));
          track("write", args, context);
          return { written: args.n };
        },
      },
      flaky: {
        execute: (args, context) => {
          const count = track("flaky", args, context);
          throw new Error(`warehouse offline (attempt ${count})`);
        },
      },
      charge: {
        execute: (args: { amount: number }, context) => {
          const count = track("charge", args, context);
          return { chargeId: `ch-${count}` };
        },
      },
      charge_once: {
        onInterrupted: "ask",
        execute: (args: { amount: number }, context) => {
          const count = track("charge_once", args, context);
          return { chargeId: `cho-${count}` };
        },
      },
      /** An approval-gated call that must never run twice unasked (R-RP-4b). */
      place_bet: {
        requiresApproval: true,
        onInterrupted: "ask",
        execute: (args, context) => {
          track("place_bet", args, context);
          // Like a real API that dedupes by idempotency key: a retry returns the same bet.
          if (!bets.has(context.idempotencyKey)) bets.set(context.idempotencyKey, `b-${bets.size + 1}`);
          return { betId: bets.get(context.idempotencyKey) };
        },
      },
      create_order: {
        requiresApproval: true,
        execute: (args, context) => {
          const count = track("create_order", args, context);
          return { orderId: `o-${count}` };
        },
      },
      cancel_order: {
        requiresApproval: true,
        execute: (args, context) => {
          track("cancel_order", args, context);
          return { cancelled: true };
        },
      },
    },
    onPassEnd: () => {
      pass += 1;
    },
  });
  const count = (method: string) => calls[method]?.length ?? 0;
  return { connector, calls, count };
}

const runtimes: CodemodeRuntime[] = [];
afterEach(async () => {
  await Promise.all(runtimes.splice(0).map((runtime) => runtime.close()));
});

function setup(options: Partial<CodemodeRuntimeOptions> = {}) {
  const shop = makeShop();
  const keyv = new Keyv();
  const runtime = createCodemodeRuntime({
    connectors: [shop.connector],
    storage: keyv,
    limits: { timeoutMs: 5_000 },
    ...options,
  });
  runtimes.push(runtime);
  return { ...shop, runtime, keyv };
}

function expectPaused(outcome: Outcome) {
  if (outcome.status !== "paused") throw new Error(`expected a pause, got ${JSON.stringify(outcome)}`);
  return outcome;
}
function expectCompleted(outcome: Outcome) {
  if (outcome.status !== "completed") throw new Error(`expected completion, got ${JSON.stringify(outcome)}`);
  return outcome;
}
function expectError(outcome: Outcome) {
  if (outcome.status !== "error") throw new Error(`expected an error, got ${JSON.stringify(outcome)}`);
  return outcome;
}

/** Rewrites one stored log entry, as if a host had died at that point. */
async function editEntry(
  keyv: Keyv,
  executionId: string,
  seq: number,
  change: (entry: Record<string, unknown>) => void,
) {
  const key = `cm:default:e:${executionId}:${seq}`;
  const text = await keyv.get(key);
  expect(typeof text).toBe("string");
  const entry = JSON.parse(text as string) as Record<string, unknown>;
  change(entry);
  await keyv.set(key, JSON.stringify(entry));
}

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

describe("interrupted calls (R-RP-4, R-RP-4b, R-CON-1)", () => {
  const chargeThenOrder = (tool: string) => `async () => {
    const charge = await shop.${tool}({ amount: 5 });
    const order = await shop.create_order({ charge: "paid" });
    return { charge, order };
  }`;

  it("R-RP-4 R-CON-1: an entry left executing by a host that died runs again on approve, with the same idempotencyKey", async () => {
    const { runtime, keyv, calls } = setup();
    const paused = expectPaused(await runtime.execute({ code: chargeThenOrder("charge") }));
    const executionId = paused.executionId;
    await editEntry(keyv, executionId, 0, (entry) => {
      entry.state = "executing";
      delete entry.result;
      delete entry.endedAt;
    });
    const done = expectCompleted(await runtime.approve({ executionId }));
    expect(calls.charge).toHaveLength(2);
    expect(calls.charge![0]!.context.idempotencyKey).toBe(`${executionId}:0`);
    expect(calls.charge![1]!.context.idempotencyKey).toBe(`${executionId}:0`);
    expect(done.result).toEqual({ charge: { chargeId: "ch-2" }, order: { orderId: "o-1" } });
    expect(done.calls![0]).toMatchObject({ seq: 0, state: "applied", result: { chargeId: "ch-2" } });
  });

  it("R-RP-4b: an onInterrupted: ask tool left executing goes back to pending and runs only once approved", async () => {
    const { runtime, keyv, calls, count } = setup();
    const paused = expectPaused(await runtime.execute({ code: chargeThenOrder("charge_once") }));
    const executionId = paused.executionId;
    await editEntry(keyv, executionId, 0, (entry) => {
      entry.state = "executing";
      delete entry.result;
    });
    const asked = expectPaused(await runtime.approve({ executionId }));
    expect(asked.pending).toEqual([
      { executionId, seq: 0, connector: "shop", method: "charge_once", args: { amount: 5 }, pauseId: "0.2" },
    ]);
    expect(count("charge_once")).toBe(1);
    expect(count("create_order")).toBe(0);
    expect(asked.calls![0]!.state).toBe("pending");
    expect((await runtime.execution(executionId))?.status).toBe("paused");

    const done = expectCompleted(await runtime.approve({ executionId, seq: 0 }));
    expect(count("charge_once")).toBe(2);
    expect(calls.charge_once![1]!.context.idempotencyKey).toBe(`${executionId}:0`);
    // create_order was approved by the first approve; that approval still stands.
    expect(count("create_order")).toBe(1);
    expect(done.result).toEqual({ charge: { chargeId: "cho-2" }, order: { orderId: "o-1" } });
  });

  it("R-RP-4b R-AP-9: an ask tool left executing and asked again may be approved or denied, not edited: it may have taken effect under its key", async () => {
    const { runtime, keyv, count } = setup();
    const paused = expectPaused(await runtime.execute({ code: chargeThenOrder("charge_once") }));
    const executionId = paused.executionId;
    await editEntry(keyv, executionId, 0, (entry) => {
      entry.state = "executing";
      delete entry.result;
    });
    expectPaused(await runtime.approve({ executionId }));
    const edited = await runtime.decide({
      executionId,
      decisions: [{ seq: 0, decision: "edit", args: { amount: 1 } }],
    });
    expect(edited).toMatchObject({ status: "error", code: "INVALID_DECISION" });
    expect((edited as { error: string }).error).toMatch(/was interrupted while it ran and may have taken effect/);
    expect(count("charge_once")).toBe(1);
    expectCompleted(await runtime.decide({ executionId, decisions: [{ seq: 0, decision: "approve" }] }));
  });

  it("R-RP-4b R-AP-7: an approved ask tool left executing asks again; the old approval is not reused", async () => {
    const { runtime, keyv, calls, count } = setup();
    const first = expectPaused(
      await runtime.execute({
        code: `async () => { const bet = await shop.place_bet({ on: "red" }); const order = await shop.create_order({ bet }); return order; }`,
      }),
    );
    const executionId = first.executionId;
    const atOrder = expectPaused(await runtime.approve({ executionId, seq: 0, by: "ann" }));
    expect(atOrder.pending[0]!.seq).toBe(1);
    expect(count("place_bet")).toBe(1);
    await editEntry(keyv, executionId, 0, (entry) => {
      entry.state = "executing";
      delete entry.result;
    });
    const asked = expectPaused(await runtime.approve({ executionId, seq: 1 }));
    expect(asked.pending).toEqual([
      { executionId, seq: 0, connector: "shop", method: "place_bet", args: { on: "red" }, pauseId: "0.2" },
    ]);
    expect(asked.calls![0]).toMatchObject({ state: "pending" });
    expect(asked.calls![0]!.decision).toBeUndefined();
    expect(count("place_bet")).toBe(1);
    expect(count("create_order")).toBe(0);

    const done = expectCompleted(await runtime.approve({ executionId, seq: 0, by: "carol" }));
    expect(done.result).toEqual({ orderId: "o-1" });
    expect(count("place_bet")).toBe(2);
    expect(calls.place_bet![1]!.context.idempotencyKey).toBe(`${executionId}:0`);
    expect(done.calls![0]!.decision).toMatchObject({ approved: true, by: "carol" });
    expect(calls.create_order![0]!.args).toEqual({ bet: { betId: "b-1" } });
  });

  it("R-CON-1: ctx carries the stable executionId, the seq and idempotencyKey executionId:seq on every pass", async () => {
    const { runtime, calls } = setup();
    const paused = expectPaused(
      await runtime.execute({
        code: `async () => { await shop.list_items(); await shop.read({ n: 1 }); return shop.create_order({ sku: "a" }); }`,
      }),
    );
    const executionId = paused.executionId;
    expectCompleted(await runtime.approve({ executionId }));
    const contexts = [calls.list_items![0]!.context, calls.read![0]!.context, calls.create_order![0]!.context];
    // Each call also gets its pass's signal (aborted on cancel) and deadline (its time limit).
    const passParts = { signal: expect.any(AbortSignal), deadline: expect.any(Number) };
    expect(contexts).toEqual([
      {
        executionId,
        seq: 0,
        idempotencyKey: `${executionId}:0`,
        connector: "shop",
        method: "list_items",
        ...passParts,
      },
      { executionId, seq: 1, idempotencyKey: `${executionId}:1`, connector: "shop", method: "read", ...passParts },
      {
        executionId,
        seq: 2,
        idempotencyKey: `${executionId}:2`,
        connector: "shop",
        method: "create_order",
        ...passParts,
      },
    ]);
  });
});

describe("steps (R-RP-5)", () => {
  it("R-RP-5: codemode.step runs fn once; after approve its recorded value replays and the gated call gets the same args", async () => {
    const { runtime, calls } = setup({ deterministic: false });
    const paused = expectPaused(
      await runtime.execute({
        code: `async () => {
          const pick = await codemode.step("pick", () => { console.log("fn ran"); return Math.random(); });
          await shop.create_order({ pick });
          return pick;
        }`,
      }),
    );
    expect(paused.logs).toEqual(["fn ran"]);
    const pick = (paused.pending[0]!.args as { pick: number }).pick;
    expect(typeof pick).toBe("number");
    const done = expectCompleted(await runtime.approve({ executionId: paused.executionId }));
    expect(done.result).toBe(pick);
    expect(done.logs).toBeUndefined();
    expect(calls.create_order![0]!.args).toEqual({ pick });
    expect(done.calls![0]).toMatchObject({
      seq: 0,
      connector: "codemode",
      method: "step",
      state: "applied",
      result: pick,
    });
  });

  it("R-RP-5: a step whose fn threw replays the same error without running fn again", async () => {
    const { runtime } = setup();
    const paused = expectPaused(
      await runtime.execute({
        code: `async () => {
          let seen;
          try {
            await codemode.step("boom", () => { console.log("fn ran"); throw new Error("no stock"); });
          } catch (error) {
            seen = error.message;
          }
          await shop.create_order({ seen });
          return seen;
        }`,
      }),
    );
    expect(paused.logs).toEqual(["fn ran"]);
    const done = expectCompleted(await runtime.approve({ executionId: paused.executionId }));
    expect(done.logs).toBeUndefined();
    const seen = (paused.pending[0]!.args as { seen: string }).seen;
    expect(seen).toContain("no stock");
    expect(done.result).toBe(seen);
  });
});

describe("a pause lets the program go on as far as it can (R-AP-8, which refines R-RP-6)", () => {
  it("R-AP-8: code that does not await the gated call and writes on: the write runs once, in the paused pass, and replays after approval", async () => {
    const { runtime, count, calls } = setup();
    const code = `async () => {
      const pending = shop.create_order({ sku: "a" });
      await shop.write({ n: 1 });
      return "went on";
    }`;
    const paused = expectPaused(await runtime.execute({ code }));
    expect(count("write")).toBe(1);
    expect(paused.calls!.map((entry) => [entry.seq, entry.method, entry.state])).toEqual([
      [0, "create_order", "pending"],
      [1, "write", "applied"],
    ]);
    const done = expectCompleted(await runtime.approve({ executionId: paused.executionId }));
    expect(done.result).toBe("went on");
    expect(count("write")).toBe(1);
    expect(count("create_order")).toBe(1);
    expect(calls.write![0]!.context.seq).toBe(1);
  });

  it("R-AP-8: code that races the gated call and returns early still pauses: the program never sees the gated call's result", async () => {
    const { runtime, count } = setup();
    const code = `async () => {
      try {
        await Promise.race([shop.create_order({ sku: "a" }), Promise.reject(new Error("skip"))]);
      } catch {}
      const later = shop.write({ n: 2 });
      later.catch(() => {});
      return "sneaky";
    }`;
    const paused = expectPaused(await runtime.execute({ code }));
    expect(paused.pending.map((action) => [action.seq, action.method])).toEqual([[0, "create_order"]]);
    expect(count("create_order")).toBe(0);
    expect(count("write")).toBe(1);
    expect((await runtime.execution(paused.executionId))?.status).toBe("paused");
    expectCompleted(await runtime.approve({ executionId: paused.executionId }));
    expect(count("create_order")).toBe(1);
    expect(count("write")).toBe(1);
  });

  it("R-AP-8: a call issued concurrently after the gated one in Promise.all runs in the paused pass, and replays after approval", async () => {
    const { runtime, count } = setup();
    const paused = expectPaused(
      await runtime.execute({
        code: `async () => Promise.all([shop.read({ n: 1 }), shop.create_order({ sku: "a" }), shop.write({ n: 3 })])`,
      }),
    );
    expect(count("read")).toBe(1);
    expect(count("write")).toBe(1);
    expect(paused.calls!.map((entry) => [entry.seq, entry.state])).toEqual([
      [0, "applied"],
      [1, "pending"],
      [2, "applied"],
    ]);
    const done = expectCompleted(await runtime.approve({ executionId: paused.executionId }));
    expect(done.result).toEqual([{ n: 1, value: 10 }, { orderId: "o-1" }, { written: 3 }]);
    expect(count("read")).toBe(1);
    expect(count("write")).toBe(1);
  });

  it("R-AP-8: with a slow store, calls issued while the pause is recorded and after a timer run once, and nothing that awaits the gated call runs", async () => {
    const entries = new Map<string, unknown>();
    const slowStore = {
      get: async (key: string) => entries.get(key),
      set: async (key: string, value: unknown) => {
        await new Promise((resolve) => setTimeout(resolve, 15));
        entries.set(key, value);
        return true;
      },
      delete: async (key: string) => entries.delete(key),
      clear: async () => entries.clear(),
    };
    const { runtime, count } = setup({ storage: new Keyv({ store: slowStore }) });
    const paused = expectPaused(
      await runtime.execute({
        code: `async () => {
          const order = shop.create_order({ sku: "a" });
          const writes = [shop.write({ n: 1 }), shop.write({ n: 2 })];
          await new Promise((resolve) => setTimeout(resolve, 5));
          const late = shop.write({ n: 3 });
          const all = await Promise.all([order, ...writes, late]);
          await shop.write({ n: 4 });
          return all;
        }`,
      }),
    );
    expect(count("write")).toBe(3);
    expect(paused.calls!.map((entry) => [entry.seq, entry.method, entry.state])).toEqual([
      [0, "create_order", "pending"],
      [1, "write", "applied"],
      [2, "write", "applied"],
      [3, "write", "applied"],
    ]);
    const done = expectCompleted(await runtime.approve({ executionId: paused.executionId }));
    expect(done.result).toEqual([{ orderId: "o-1" }, { written: 1 }, { written: 2 }, { written: 3 }]);
    expect(count("write")).toBe(4);
  });
});

describe("unawaited calls (R-RP-7)", () => {
  it("R-RP-7: calls started and not awaited before return still run to completion and are logged", async () => {
    const { runtime, count } = setup();
    const outcome = expectCompleted(
      await runtime.execute({
        code: `async () => {
          shop.write({ n: 1, delayMs: 40 });
          shop.write({ n: 2, delayMs: 10 });
          return "returned early";
        }`,
      }),
    );
    expect(outcome.result).toBe("returned early");
    expect(count("write")).toBe(2);
    expect(outcome.calls!.map((entry) => [entry.seq, entry.state, entry.result])).toEqual([
      [0, "applied", { written: 1 }],
      [1, "applied", { written: 2 }],
    ]);
    const stored = await runtime.execution(outcome.executionId);
    expect(stored?.log.map((entry) => entry.state)).toEqual(["applied", "applied"]);
  });
});

describe("Promise.all replays (R-RP-8)", () => {
  it("R-RP-8: five concurrent calls that finish in another order on each pass replay without divergence, results in place", async () => {
    const { runtime, count, calls } = setup();
    const paused = expectPaused(
      await runtime.execute({
        code: `async () => {
          const recorded = await Promise.all([1, 2, 3, 4, 5].map((n) => shop.jittery({ n })));
          const live = await Promise.all([1, 2, 3, 4, 5].map((n) => shop.jittery_live({ n })));
          const order = await shop.create_order({ recorded, live });
          return { recorded, live, order };
        }`,
      }),
    );
    // On the first pass the calls finished last-issued first; their seqs are still issue order.
    expect(calls.jittery!.map((call) => call.context.seq)).toEqual([0, 1, 2, 3, 4]);
    expect(paused.calls!.slice(0, 5).map((entry) => entry.args)).toEqual([
      { n: 1 },
      { n: 2 },
      { n: 3 },
      { n: 4 },
      { n: 5 },
    ]);
    expect(paused.pending[0]!.seq).toBe(10);
    const done = expectCompleted(await runtime.approve({ executionId: paused.executionId }));
    expect(done.result).toEqual({
      recorded: [100, 200, 300, 400, 500],
      live: [1000, 2000, 3000, 4000, 5000],
      order: { orderId: "o-1" },
    });
    expect(count("jittery")).toBe(5);
    expect(count("jittery_live")).toBe(10);
    expect(calls.jittery_live!.slice(5).map((call) => [call.context.seq, (call.args as { n: number }).n])).toEqual([
      [5, 1],
      [6, 2],
      [7, 3],
      [8, 4],
      [9, 5],
    ]);
  });
});

describe("replay-stable clock and randomness (R-SB-6)", () => {
  it("R-SB-6: Date.now, new Date, Math.random, randomUUID and getRandomValues read the same on every pass", async () => {
    const { runtime, calls } = setup();
    const paused = expectPaused(
      await runtime.execute({
        code: `async () => {
          const seen = {
            now: Date.now(),
            date: new Date().toISOString(),
            random: [Math.random(), Math.random()],
            uuid: crypto.randomUUID(),
            bytes: Array.from(crypto.getRandomValues(new Uint8Array(8))),
          };
          await shop.create_order(seen);
          return seen;
        }`,
      }),
    );
    const seenAtPause = paused.pending[0]!.args as {
      now: number;
      date: string;
      random: number[];
      uuid: string;
      bytes: number[];
    };
    expect(new Date(seenAtPause.now).toISOString()).toBe(seenAtPause.date);
    expect(seenAtPause.random[0]).not.toBe(seenAtPause.random[1]);
    expect(seenAtPause.uuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const done = expectCompleted(await runtime.approve({ executionId: paused.executionId }));
    expect(done.result).toEqual(seenAtPause);
    expect(calls.create_order![0]!.args).toEqual(seenAtPause);
  });

  it("R-SB-6: two executions of the same code get different random values (the seed is the execution id)", async () => {
    const { runtime } = setup();
    const code = `async () => [Math.random(), crypto.randomUUID()]`;
    const first = expectCompleted(await runtime.execute({ code }));
    const second = expectCompleted(await runtime.execute({ code }));
    expect(first.result).not.toEqual(second.result);
  });
});
