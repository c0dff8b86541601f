/**
 * Rollback stories (R-RB-1 … R-RB-4): applied connector calls are compensated newest first, with
 * the tool's own `revert`, as data and never twice.
 */

import {
  type CodemodeRuntime,
  type CodemodeRuntimeOptions,
  createCodemodeRuntime,
  defineConnector,
  type ToolContext,
} from "@codemode/core";
import Keyv from "keyv";
import { afterEach, describe, expect, it } from "vitest";

const runtimes: CodemodeRuntime[] = [];

afterEach(async () => {
  await Promise.all(runtimes.splice(0).map((runtime) => runtime.close()));
});

function runtimeWith(options: CodemodeRuntimeOptions): CodemodeRuntime {
  const runtime = createCodemodeRuntime(options);
  runtimes.push(runtime);
  return runtime;
}

/** What the tools of a store front saw: every execute and revert, with its context. */
interface Seen {
  executed: Array<{ method: string; args: unknown; ctx: ToolContext }>;
  reverted: Array<{ method: string; args: unknown; result: unknown; ctx: ToolContext }>;
  disposed: string[];
}

/**
 * A shop: `reserve`, `charge` and `ship` can be undone; `notify` cannot. `failReverts` names
 * tools whose revert throws the next time(s) it runs.
 */
function shopConnector(seen: Seen, failReverts: string[] = []) {
  const revertible = (method: string) => ({
    execute: (args: Record<string, unknown>, ctx: ToolContext) => {
      seen.executed.push({ method, args, ctx });
      return { [`${method}Id`]: `${method}-${ctx.seq}` };
    },
    revert: (args: Record<string, unknown>, result: unknown, ctx: ToolContext) => {
      const failure = failReverts.indexOf(method);
      if (failure >= 0) {
        failReverts.splice(failure, 1);
        throw new Error(`${method} could not be undone: the warehouse is offline`);
      }
      seen.reverted.push({ method, args, result, ctx });
    },
  });
  return defineConnector({
    name: "shop",
    tools: {
      reserve: revertible("reserve"),
      charge: revertible("charge"),
      ship: revertible("ship"),
      notify: {
        execute: (args, ctx) => {
          seen.executed.push({ method: "notify", args, ctx });
          return "sent";
        },
      },
    },
    disposeExecution: (_executionId, status) => void seen.disposed.push(status),
  });
}

function crmConnector(seen: Seen) {
  return defineConnector({
    name: "crm",
    tools: {
      log_sale: {
        execute: (args, ctx) => {
          seen.executed.push({ method: "crm.log_sale", args, ctx });
          return { saleId: "s-1" };
        },
        revert: (args, result, ctx) => void seen.reverted.push({ method: "crm.log_sale", args, result, ctx }),
      },
    },
  });
}

const newSeen = (): Seen => ({ executed: [], reverted: [], disposed: [] });

/** seq 0 reserve, 1 step, 2 charge, 3 notify, 4 ship. */
const ORDER_FLOW = `async () => {
  const reservation = await shop.reserve({ item: "pen", quantity: 2 });
  const stamp = await codemode.step("stamp", () => "2025-01-01");
  const payment = await shop.charge({ amount: 12, reservation: reservation.reserveId });
  await shop.notify({ text: "paid " + stamp });
  await shop.ship({ payment: payment.chargeId });
  return "shipped";
}`;

async function stateOf(runtime: CodemodeRuntime, executionId: string) {
  const state = await runtime.execution(executionId);
  return {
    status: state?.status,
    states: state?.log.map((entry) => `${entry.seq}:${entry.connector}.${entry.method}:${entry.state}`),
  };
}

describe("R-RB-1 what a rollback reverts", () => {
  it("R-RB-1: who rolled back and why stay with each reverted call, and in the report", async () => {
    const seen = newSeen();
    const runtime = runtimeWith({ connectors: [shopConnector(seen)] });
    const outcome = await runtime.execute({ code: ORDER_FLOW });
    const before = Date.now();
    const report = await runtime.rollback({ executionId: outcome.executionId, by: "dana", reason: "wrong address" });
    expect(report).toMatchObject({ executionId: outcome.executionId, by: "dana", reverted: [4, 2, 0] });
    const log = (await runtime.execution(outcome.executionId))?.log ?? [];
    for (const seq of [0, 2, 4]) {
      const entry = log.find((each) => each.seq === seq);
      expect(entry).toMatchObject({ state: "reverted", revert: { by: "dana", reason: "wrong address" } });
      expect(entry?.revert?.at).toBeGreaterThanOrEqual(before);
    }
    // Not reverted: no record of a revert.
    expect(log.find((each) => each.seq === 3)?.revert).toBeUndefined();
  });

  it("R-RB-1: an order that reserved, charged, notified and shipped is undone newest first: ship, charge, reserve; the step is left alone and notify (no revert) is skipped", async () => {
    const seen = newSeen();
    const runtime = runtimeWith({ connectors: [shopConnector(seen)] });
    const outcome = await runtime.execute({ code: ORDER_FLOW });
    expect(outcome).toMatchObject({ status: "completed", result: "shipped" });

    const report = await runtime.rollback({ executionId: outcome.executionId });

    expect(report).toEqual({
      executionId: outcome.executionId,
      status: "rolled_back",
      reverted: [4, 2, 0],
      failed: [],
      skipped: [3],
    });
    expect(seen.reverted.map((revert) => `${revert.method}@${revert.ctx.seq}`)).toEqual([
      "ship@4",
      "charge@2",
      "reserve@0",
    ]);
    expect(await stateOf(runtime, outcome.executionId)).toEqual({
      status: "rolled_back",
      states: [
        "0:shop.reserve:reverted",
        "1:codemode.step:applied",
        "2:shop.charge:reverted",
        "3:shop.notify:applied",
        "4:shop.ship:reverted",
      ],
    });
  });

  it("R-RB-1 R-CON-1: revert gets the call's args, its recorded result and a ctx whose idempotencyKey is the one execute had", async () => {
    const seen = newSeen();
    const runtime = runtimeWith({ connectors: [shopConnector(seen)] });
    const outcome = await runtime.execute({ code: ORDER_FLOW });

    await runtime.rollback({ executionId: outcome.executionId });

    const charged = seen.executed.find((call) => call.method === "charge")!;
    const refunded = seen.reverted.find((call) => call.method === "charge")!;
    expect(refunded.args).toEqual({ amount: 12, reservation: "reserve-0" });
    expect(refunded.result).toEqual({ chargeId: "charge-2" });
    expect(refunded.ctx).toMatchObject({
      executionId: outcome.executionId,
      seq: 2,
      connector: "shop",
      method: "charge",
    });
    expect(refunded.ctx.idempotencyKey).toBe(charged.ctx.idempotencyKey);
    expect(refunded.ctx.idempotencyKey).toBe(`${outcome.executionId}:2`);
  });

  it("R-RB-1: rolled back from a runtime that no longer configures crm, the crm call is skipped and the shop calls are reverted", async () => {
    const keyv = new Keyv();
    const seenBefore = newSeen();
    const seenAfter = newSeen();
    const before = runtimeWith({ storage: keyv, connectors: [shopConnector(seenBefore), crmConnector(seenBefore)] });
    const after = runtimeWith({ storage: keyv, connectors: [shopConnector(seenAfter)] });
    const outcome = await before.execute({
      code: `async () => { const r = await shop.reserve({ item: "cup" }); await crm.log_sale({ reservation: r.reserveId }); await shop.charge({ amount: 3 }); }`,
    });
    expect(outcome.status).toBe("completed");

    const report = await after.rollback({ executionId: outcome.executionId });

    expect(report).toMatchObject({ status: "rolled_back", reverted: [2, 0], skipped: [1], failed: [] });
    expect(seenAfter.reverted.map((revert) => revert.method)).toEqual(["charge", "reserve"]);
    expect(seenBefore.reverted).toEqual([]);
    expect((await stateOf(after, outcome.executionId)).states).toEqual([
      "0:shop.reserve:reverted",
      "1:crm.log_sale:applied",
      "2:shop.charge:reverted",
    ]);
  });

  it("R-RB-1 R-RB-3: calls that failed are not reverted; a run whose applied calls have no revert keeps its status and is not disposed again", async () => {
    const seen = newSeen();
    const boomReverts: unknown[] = [];
    const flaky = defineConnector({
      name: "flaky",
      tools: {
        boom: {
          execute: () => {
            throw new Error("card declined");
          },
          revert: (args) => void boomReverts.push(args),
        },
      },
    });
    const runtime = runtimeWith({ connectors: [shopConnector(seen), flaky] });
    const outcome = await runtime.execute({
      code: `async () => { await shop.notify({ text: "a" }); try { await flaky.boom({}); } catch {} await shop.notify({ text: "b" }); return "told"; }`,
    });
    expect(outcome).toMatchObject({ status: "completed", result: "told" });
    expect(seen.disposed).toEqual(["completed"]);

    const report = await runtime.rollback({ executionId: outcome.executionId });

    expect(report).toEqual({
      executionId: outcome.executionId,
      status: "completed",
      reverted: [],
      failed: [],
      skipped: [2, 0],
    });
    expect(seen.reverted).toEqual([]);
    expect(boomReverts).toEqual([]);
    expect(await stateOf(runtime, outcome.executionId)).toEqual({
      status: "completed",
      states: ["0:shop.notify:applied", "1:flaky.boom:error", "2:shop.notify:applied"],
    });
    expect(seen.disposed).toEqual(["completed"]);
  });

  it("R-RB-1 R-RT-1: rolling back an unknown execution is a report with NOT_FOUND, not a throw", async () => {
    const runtime = runtimeWith({ connectors: [shopConnector(newSeen())] });

    const report = await runtime.rollback({ executionId: "no-such-execution" });

    expect(report).toMatchObject({
      executionId: "no-such-execution",
      code: "NOT_FOUND",
      reverted: [],
      failed: [],
      skipped: [],
    });
    expect(report.error).toContain("no-such-execution");
  });
});

describe("R-RB-2 R-RB-3 R-RB-4 a revert that fails halfway", () => {
  it("R-RB-2 R-RB-4: charge cannot be refunded at first; ship and reserve are still undone, the failure is listed, and a second rollback finishes the job without undoing anything twice", async () => {
    const seen = newSeen();
    const runtime = runtimeWith({ connectors: [shopConnector(seen, ["charge"])] });
    const outcome = await runtime.execute({ code: ORDER_FLOW });

    const first = await runtime.rollback({ executionId: outcome.executionId });

    expect(first).toEqual({
      executionId: outcome.executionId,
      status: "rolled_back",
      reverted: [4, 0],
      failed: [{ seq: 2, error: "charge could not be undone: the warehouse is offline" }],
      skipped: [3],
    });
    expect((await stateOf(runtime, outcome.executionId)).states).toEqual([
      "0:shop.reserve:reverted",
      "1:codemode.step:applied",
      "2:shop.charge:applied",
      "3:shop.notify:applied",
      "4:shop.ship:reverted",
    ]);
    expect(seen.disposed).toEqual(["completed", "rolled_back"]);

    const second = await runtime.rollback({ executionId: outcome.executionId });

    expect(second).toEqual({
      executionId: outcome.executionId,
      status: "rolled_back",
      reverted: [2],
      failed: [],
      skipped: [3],
    });
    const third = await runtime.rollback({ executionId: outcome.executionId });
    expect(third).toEqual({
      executionId: outcome.executionId,
      status: "rolled_back",
      reverted: [],
      failed: [],
      skipped: [3],
    });

    const revertsPerSeq = new Map<number, number>();
    for (const revert of seen.reverted) revertsPerSeq.set(revert.ctx.seq, (revertsPerSeq.get(revert.ctx.seq) ?? 0) + 1);
    expect(Object.fromEntries(revertsPerSeq)).toEqual({ 0: 1, 2: 1, 4: 1 });
    expect(seen.reverted.map((revert) => revert.ctx.seq)).toEqual([4, 0, 2]);
    expect((await stateOf(runtime, outcome.executionId)).states).toEqual([
      "0:shop.reserve:reverted",
      "1:codemode.step:applied",
      "2:shop.charge:reverted",
      "3:shop.notify:applied",
      "4:shop.ship:reverted",
    ]);
    // Disposed once as rolled_back, not again by the runs that finished the job.
    expect(seen.disposed).toEqual(["completed", "rolled_back"]);
  });

  it("R-RB-3: when the only revertible call fails to revert, nothing was undone and the run keeps its status", async () => {
    const seen = newSeen();
    const runtime = runtimeWith({ connectors: [shopConnector(seen, ["charge"])] });
    const outcome = await runtime.execute({
      code: `async () => { await shop.notify({ text: "hi" }); await shop.charge({ amount: 5 }); return "ok"; }`,
    });

    const report = await runtime.rollback({ executionId: outcome.executionId });

    expect(report).toEqual({
      executionId: outcome.executionId,
      status: "completed",
      reverted: [],
      failed: [{ seq: 1, error: "charge could not be undone: the warehouse is offline" }],
      skipped: [0],
    });
    expect(await stateOf(runtime, outcome.executionId)).toEqual({
      status: "completed",
      states: ["0:shop.notify:applied", "1:shop.charge:applied"],
    });
    expect(seen.disposed).toEqual(["completed"]);
  });

  it("R-RB-3 R-RP-3: a run that errored after charging can be rolled back; its log then says reverted", async () => {
    const seen = newSeen();
    const runtime = runtimeWith({ connectors: [shopConnector(seen)] });
    const outcome = await runtime.execute({
      code: `async () => { await shop.charge({ amount: 7 }); throw new Error("address unknown"); }`,
    });
    expect(outcome).toMatchObject({ status: "error", code: "PROGRAM_ERROR" });

    const report = await runtime.rollback({ executionId: outcome.executionId });

    expect(report).toMatchObject({ status: "rolled_back", reverted: [0], failed: [], skipped: [] });
    expect(await stateOf(runtime, outcome.executionId)).toEqual({
      status: "rolled_back",
      states: ["0:shop.charge:reverted"],
    });
    expect(seen.disposed).toEqual(["error", "rolled_back"]);
    // A rolled-back run cannot be revived.
    expect(await runtime.approve({ executionId: outcome.executionId })).toMatchObject({
      status: "error",
      code: "NOT_PAUSED",
    });
  });
});

describe("rollback of a paused execution", () => {
  it("R-RB-3 R-AP-3: rolling back a paused run ends its pending action, so it can never be approved", async () => {
    const orders: string[] = [];
    const shop = defineConnector({
      name: "shop",
      tools: {
        reserve: {
          execute: async () => ({ reservationId: "r-1" }),
          revert: async () => void orders.push("unreserved"),
        },
        charge: { requiresApproval: true, execute: async () => void orders.push("charged") },
      },
    });
    const runtime = runtimeWith({ connectors: [shop], storage: new Keyv() });
    const paused = await runtime.execute({
      code: "async () => { await shop.reserve({}); await shop.charge({ amount: 5 }); }",
    });
    expect(paused.status).toBe("paused");
    const report = await runtime.rollback({ executionId: paused.executionId });
    expect(report).toMatchObject({ status: "rolled_back", reverted: [0], failed: [] });
    const record = await runtime.execution(paused.executionId);
    expect(record?.log.map((entry) => [entry.seq, entry.state])).toEqual([
      [0, "reverted"],
      [1, "error"],
    ]);
    expect(record?.log[1]?.error).toBe("rolled back before approval");
    expect((await runtime.pending(paused.executionId)).items).toEqual([]);
    const approved = await runtime.approve({ executionId: paused.executionId });
    expect(approved).toMatchObject({ status: "error", code: "NOT_PAUSED" });
    expect(orders).toEqual(["unreserved"]);
  });
});
