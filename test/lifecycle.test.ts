/**
 * End-to-end stories of an execution's life around its passes: resource hooks (R-RS-*). Retention
 * and expiry (R-RE-*) are in lifecycle-retention.test.ts, control operations racing an approval
 * (R-AP-6, R-ST-4) in lifecycle-races.test.ts and lifecycle-races-expiry.test.ts.
 */
import { defineConnector } from "@codemode/core";
import Keyv from "keyv";
import { describe, expect, it } from "vitest";
import {
  closeRuntimesAfterEach,
  events,
  type HookCall,
  hooked,
  ORDER_CODE,
  runtimeWith,
  shiftableClock,
  shopTools,
} from "./lifecycle-fixtures.ts";

closeRuntimesAfterEach();

describe("R-RS-1 onPassEnd after every pass", () => {
  it("R-RS-1: pauses at create_order, approve, completes — every configured connector, also the unused mail, hears each pass end, and on the terminal pass before disposeExecution", async () => {
    const calls: HookCall[] = [];
    const counter = { orders: 0 };
    const runtime = runtimeWith({ connectors: [hooked("shop", calls, shopTools(counter)), hooked("mail", calls)] });

    const paused = await runtime.execute({ code: ORDER_CODE });
    expect(paused.status).toBe("paused");
    expect(events(calls)).toEqual(["shop.onPassEnd(paused)", "mail.onPassEnd(paused)"]);

    const completed = await runtime.approve({ executionId: paused.executionId });
    expect(completed).toMatchObject({ status: "completed", result: "o-1" });
    expect(events(calls)).toEqual([
      "shop.onPassEnd(paused)",
      "mail.onPassEnd(paused)",
      "shop.onPassEnd(completed)",
      "mail.onPassEnd(completed)",
      "shop.disposeExecution(completed)",
      "mail.disposeExecution(completed)",
    ]);
    expect(new Set(calls.map((call) => call.executionId))).toEqual(new Set([paused.executionId]));
  });

  it("R-RS-1 R-RS-2: a program that throws ends error; the hooks hear error, onPassEnd first", async () => {
    const calls: HookCall[] = [];
    const runtime = runtimeWith({ connectors: [hooked("shop", calls), hooked("mail", calls)] });

    const outcome = await runtime.execute({
      code: `async () => { await shop.ping(); throw new Error("out of stock"); }`,
    });

    expect(outcome).toMatchObject({ status: "error", code: "PROGRAM_ERROR" });
    expect(events(calls)).toEqual([
      "shop.onPassEnd(error)",
      "mail.onPassEnd(error)",
      "shop.disposeExecution(error)",
      "mail.disposeExecution(error)",
    ]);
  });

  it("R-RS-1 R-RS-2 R-SB-2: code with a syntax error is still an execution with one pass: SYNTAX_ERROR, and the hooks hear error", async () => {
    const calls: HookCall[] = [];
    const runtime = runtimeWith({ connectors: [hooked("shop", calls)] });

    const outcome = await runtime.execute({ code: "async () => { return shop.ping( }" });

    expect(outcome).toMatchObject({ status: "error", code: "SYNTAX_ERROR" });
    expect((await runtime.execution(outcome.executionId))?.status).toBe("error");
    expect(calls).toEqual([
      { event: "shop.onPassEnd(error)", executionId: outcome.executionId },
      { event: "shop.disposeExecution(error)", executionId: outcome.executionId },
    ]);
  });
});

describe("R-RS-2 disposeExecution when an execution becomes terminal, never on a pause", () => {
  it("R-RS-2: a program with two approvals pauses twice without being disposed, and is disposed once when it completes", async () => {
    const calls: HookCall[] = [];
    const counter = { orders: 0 };
    const runtime = runtimeWith({ connectors: [hooked("shop", calls, shopTools(counter))] });
    const disposals = () => events(calls).filter((event) => event.includes("disposeExecution"));

    const first = await runtime.execute({
      code: `async () => { await shop.create_order({ n: 1 }); await shop.create_order({ n: 2 }); return "two orders"; }`,
    });
    expect(first.status).toBe("paused");
    const second = await runtime.approve({ executionId: first.executionId });
    expect(second.status).toBe("paused");
    expect(disposals()).toEqual([]);

    const done = await runtime.approve({ executionId: first.executionId });
    expect(done).toMatchObject({ status: "completed", result: "two orders" });
    expect(events(calls)).toEqual([
      "shop.onPassEnd(paused)",
      "shop.onPassEnd(paused)",
      "shop.onPassEnd(completed)",
      "shop.disposeExecution(completed)",
    ]);
  });

  it("R-RS-2 R-AP-4: rejecting the pending order disposes the execution as rejected, without running onPassEnd again", async () => {
    const calls: HookCall[] = [];
    const runtime = runtimeWith({
      connectors: [hooked("shop", calls, shopTools({ orders: 0 })), hooked("mail", calls)],
    });

    const paused = await runtime.execute({ code: ORDER_CODE });
    expect(paused.status).toBe("paused");
    expect(await runtime.reject({ executionId: paused.executionId, seq: 1 })).toBe(true);

    expect(events(calls)).toEqual([
      "shop.onPassEnd(paused)",
      "mail.onPassEnd(paused)",
      "shop.disposeExecution(rejected)",
      "mail.disposeExecution(rejected)",
    ]);
  });

  it("R-RS-2 R-RB-3: rolling back a completed run disposes it again as rolled_back", async () => {
    const calls: HookCall[] = [];
    const runtime = runtimeWith({ connectors: [hooked("shop", calls, shopTools({ orders: 0 }))] });

    const paused = await runtime.execute({ code: ORDER_CODE });
    await runtime.approve({ executionId: paused.executionId });
    const report = await runtime.rollback({ executionId: paused.executionId });

    expect(report).toMatchObject({ status: "rolled_back", reverted: [1] });
    expect(events(calls)).toEqual([
      "shop.onPassEnd(paused)",
      "shop.onPassEnd(completed)",
      "shop.disposeExecution(completed)",
      "shop.disposeExecution(rolled_back)",
    ]);
  });

  it("R-RS-2 R-RE-2: a paused run that expires is disposed as rejected", async () => {
    const calls: HookCall[] = [];
    const clock = shiftableClock();
    const runtime = runtimeWith({ connectors: [hooked("shop", calls, shopTools({ orders: 0 }))] });

    const paused = await runtime.execute({ code: ORDER_CODE });
    clock.advance(1);
    expect(await runtime.expirePaused({ maxAgeMs: 0 })).toEqual([paused.executionId]);

    expect((await runtime.execution(paused.executionId))?.status).toBe("rejected");
    expect(events(calls)).toEqual(["shop.onPassEnd(paused)", "shop.disposeExecution(rejected)"]);
  });

  it("R-RS-2 R-RE-3: deleting a paused run disposes it; deleting a finished one does not dispose it twice", async () => {
    const calls: HookCall[] = [];
    const runtime = runtimeWith({ connectors: [hooked("shop", calls, shopTools({ orders: 0 }))] });

    const paused = await runtime.execute({ code: ORDER_CODE });
    expect(await runtime.deleteExecution(paused.executionId)).toBe(true);
    expect(calls).toEqual([
      { event: "shop.onPassEnd(paused)", executionId: paused.executionId },
      { event: "shop.disposeExecution(rejected)", executionId: paused.executionId },
    ]);

    calls.length = 0;
    const finished = await runtime.execute({ code: "async () => shop.ping()" });
    expect(await runtime.deleteExecution(finished.executionId)).toBe(true);
    expect(events(calls)).toEqual(["shop.onPassEnd(completed)", "shop.disposeExecution(completed)"]);
  });
});

describe("R-RS-3 hooks never fail an execution and run wherever the execution ends", () => {
  it("R-RS-3: onPassEnd and disposeExecution that throw leave the run completed and are reported through the logger", async () => {
    const warnings: string[] = [];
    const later: string[] = [];
    const fragile = defineConnector({
      name: "fragile",
      tools: { ping: { execute: () => "pong" } },
      onPassEnd: () => {
        throw new Error("pass-end boom");
      },
      disposeExecution: async () => {
        throw new Error("dispose boom");
      },
    });
    // A connector configured after the throwing one still gets its hooks.
    const steady = defineConnector({
      name: "steady",
      tools: { ping: { execute: () => "pong" } },
      onPassEnd: (_id, status) => void later.push(`onPassEnd(${status})`),
      disposeExecution: (_id, status) => void later.push(`disposeExecution(${status})`),
    });
    const runtime = runtimeWith({
      connectors: [fragile, steady],
      logger: { warn: (message) => warnings.push(message) },
    });

    const outcome = await runtime.execute({ code: "async () => { await fragile.ping(); return 42; }" });

    expect(outcome).toMatchObject({ status: "completed", result: 42 });
    expect((await runtime.execution(outcome.executionId))?.status).toBe("completed");
    expect(later).toEqual(["onPassEnd(completed)", "disposeExecution(completed)"]);
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toMatch(/onPassEnd of connector "fragile".*pass-end boom/);
    expect(warnings[1]).toMatch(/disposeExecution of connector "fragile".*dispose boom/);
    expect(warnings.every((warning) => warning.includes(outcome.executionId))).toBe(true);
  });

  it("R-RS-3 R-ST-3: paused on runtime A, approved on runtime B over the same Keyv: B's hooks run, A's do not", async () => {
    const keyv = new Keyv();
    const onA: HookCall[] = [];
    const onB: HookCall[] = [];
    const countA = { orders: 0 };
    const countB = { orders: 0 };
    const runtimeA = runtimeWith({ storage: keyv, connectors: [hooked("shop", onA, shopTools(countA))] });
    const runtimeB = runtimeWith({ storage: keyv, connectors: [hooked("shop", onB, shopTools(countB))] });

    const paused = await runtimeA.execute({ code: ORDER_CODE });
    expect(paused.status).toBe("paused");
    const completed = await runtimeB.approve({ executionId: paused.executionId });

    expect(completed).toMatchObject({ status: "completed", result: "o-1" });
    expect(countB.orders).toBe(1);
    expect(countA.orders).toBe(0);
    expect(events(onA)).toEqual(["shop.onPassEnd(paused)"]);
    expect(onB).toEqual([
      { event: "shop.onPassEnd(completed)", executionId: paused.executionId },
      { event: "shop.disposeExecution(completed)", executionId: paused.executionId },
    ]);
  });
});
