import {
  type CodemodeRuntime,
  type CodemodeRuntimeOptions,
  type ConnectorDefinition,
  createCodemodeRuntime,
  defineConnector,
  type Outcome,
  type ToolContext,
} from "@codemode/core";
import Keyv from "keyv";
import { afterEach, describe, expect, it } from "vitest";

/** Approval stories (R-AP-*): gated calls pause, people approve or reject, nothing runs twice. */

type Call = { args: unknown; context: ToolContext };

function makeConnectors() {
  const calls: Record<string, Call[]> = {};
  const reverts: string[] = [];
  const track = (method: string, args: unknown, context: ToolContext) => {
    calls[method] ??= [];
    calls[method].push({ args, context });
    return calls[method].length;
  };
  const shop = defineConnector({
    name: "shop",
    tools: {
      list_items: {
        execute: (args, context) => {
          track("list_items", args, context);
          return [
            { id: 1, name: "pen" },
            { id: 2, name: "cup" },
          ];
        },
      },
      charge: {
        execute: (args: { amount: number }, context) => {
          const count = track("charge", args, context);
          return { chargeId: `ch-${count}` };
        },
        revert: (args) => {
          reverts.push(`charge ${JSON.stringify(args)}`);
        },
      },
      create_order: {
        description: "Places an order for an item.",
        inputSchema: { type: "object", properties: { item: { type: "number" } }, required: ["item"] },
        requiresApproval: true,
        execute: async (args: { item: number }, context) => {
          const count = track("create_order", args, context);
          // A real API takes a while; concurrent approvals overlap here.
          await new Promise((resolve) => setTimeout(resolve, 20));
          return { orderId: `o-${count}` };
        },
        revert: (args) => {
          reverts.push(`create_order ${JSON.stringify(args)}`);
        },
      },
      refund: {
        requiresApproval: (args: { amount: number }) => args.amount > 100,
        execute: (args: { amount: number }, context) => {
          track("refund", args, context);
          return { refunded: args.amount };
        },
      },
      ship: {
        requiresApproval: (args: { to?: { country: string } }) => args.to!.country !== "NL",
        execute: (args, context) => {
          track("ship", args, context);
          return { shipped: true };
        },
      },
    },
  });
  const mail = defineConnector({
    name: "mail",
    tools: {
      send: {
        execute: (args: { to: string }, context) => {
          track("send", args, context);
          return { sent: true };
        },
      },
    },
  });
  const count = (method: string) => calls[method]?.length ?? 0;
  return { shop, mail, calls, reverts, count };
}

const runtimes: CodemodeRuntime[] = [];
afterEach(async () => {
  await Promise.all(runtimes.splice(0).map((runtime) => runtime.close()));
});

function track(runtime: CodemodeRuntime): CodemodeRuntime {
  runtimes.push(runtime);
  return runtime;
}

function setup(options: Partial<CodemodeRuntimeOptions> = {}) {
  const connectors = makeConnectors();
  const keyv = new Keyv();
  const runtime = track(
    createCodemodeRuntime({
      connectors: [connectors.shop, connectors.mail],
      storage: keyv,
      limits: { timeoutMs: 5_000 },
      ...options,
    }),
  );
  return { ...connectors, runtime, keyv };
}

function expectPaused(outcome: Outcome) {
  if (outcome.status !== "paused") throw new Error(`expected a pause, got ${JSON.stringify(outcome)}`);
  return outcome;
}
function expectCompleted(outcome: Outcome) {
  if (outcome.status !== "completed") throw new Error(`expected completion, got ${JSON.stringify(outcome)}`);
  return outcome;
}
function expectError(outcome: Outcome, code?: string) {
  if (outcome.status !== "error") throw new Error(`expected an error, got ${JSON.stringify(outcome)}`);
  if (code !== undefined) expect(outcome.code).toBe(code);
  return outcome;
}

const ORDER_CODE = `async () => {
  const items = await shop.list_items();
  const order = await shop.create_order({ item: items[0].id });
  return order.orderId;
}`;

describe("pause and approve (R-AP-1, R-AP-2)", () => {
  it("R-AP-1 R-AP-2: pauses at create_order, approve, completes with the order id", async () => {
    const { runtime, count, calls, keyv } = setup();
    const paused = expectPaused(await runtime.execute({ code: ORDER_CODE }));
    const executionId = paused.executionId;
    // With what a person needs to decide: the tool's description and input schema (for an edit form).
    expect(paused.pending).toEqual([
      {
        executionId,
        seq: 1,
        pauseId: "1.1",
        connector: "shop",
        method: "create_order",
        args: { item: 1 },
        description: "Places an order for an item.",
        inputSchema: { type: "object", properties: { item: { type: "number" } }, required: ["item"] },
      },
    ]);
    expect(count("create_order")).toBe(0);
    expect(paused.calls!.map((entry) => [entry.seq, entry.method, entry.state, entry.requiresApproval])).toEqual([
      [0, "list_items", "applied", false],
      [1, "create_order", "pending", true],
    ]);
    expect((await runtime.pending(executionId)).items).toEqual(paused.pending);
    expect((await runtime.pending()).items).toEqual(paused.pending);
    expect(await runtime.outcome(executionId)).toMatchObject({ pending: paused.pending });
    // A runtime without the tool (another process's config) still lists the action, without them.
    const bare = track(createCodemodeRuntime({ storage: keyv }));
    expect((await bare.pending()).items).toEqual([
      { executionId, seq: 1, connector: "shop", method: "create_order", args: { item: 1 }, pauseId: "1.1" },
    ]);
    expect((await runtime.execution(executionId))?.status).toBe("paused");

    const done = expectCompleted(await runtime.approve({ executionId }));
    expect(done.executionId).toBe(executionId);
    expect(done.result).toBe("o-1");
    expect(count("create_order")).toBe(1);
    expect(count("list_items")).toBe(1);
    expect(calls.create_order![0]!.args).toEqual({ item: 1 });
    expect(done.calls![1]).toMatchObject({ seq: 1, state: "applied", result: { orderId: "o-1" } });
    const stored = await runtime.execution(executionId);
    expect(stored?.status).toBe("completed");
    expect(stored?.result).toBe("o-1");
    expect((await runtime.pending()).items).toEqual([]);
  });

  it("R-AP-1: the code never sees a provisional result: nothing after the gated call runs before approval", async () => {
    const { runtime, count } = setup();
    const paused = expectPaused(
      await runtime.execute({
        code: `async () => {
          const order = await shop.create_order({ item: 2 });
          console.log("got", order);
          await mail.send({ to: "ann", order });
          return order;
        }`,
      }),
    );
    expect(paused.logs).toBeUndefined();
    expect(count("send")).toBe(0);
    const done = expectCompleted(await runtime.approve({ executionId: paused.executionId }));
    expect(done.logs).toEqual(['got {"orderId":"o-1"}']);
    expect(done.result).toEqual({ orderId: "o-1" });
    expect(count("send")).toBe(1);
  });

  it("R-AP-2: each gated call pauses in turn; approve goes on to the next approval, then completes", async () => {
    const { runtime, count } = setup();
    const first = expectPaused(
      await runtime.execute({
        code: `async () => [await shop.create_order({ item: 1 }), await shop.create_order({ item: 2 })]`,
      }),
    );
    expect(first.pending[0]).toMatchObject({ seq: 0, args: { item: 1 } });
    const second = expectPaused(await runtime.approve({ executionId: first.executionId }));
    expect(second.executionId).toBe(first.executionId);
    expect(second.pending[0]).toMatchObject({ seq: 1, args: { item: 2 } });
    expect(count("create_order")).toBe(1);
    const done = expectCompleted(await runtime.approve({ executionId: first.executionId, seq: 1 }));
    expect(done.result).toEqual([{ orderId: "o-1" }, { orderId: "o-2" }]);
    expect(count("create_order")).toBe(2);
  });

  it("R-AP-1: requiresApproval (args) => boolean pauses only for the args it says", async () => {
    const { runtime, count } = setup();
    const small = expectCompleted(await runtime.execute({ code: `async () => shop.refund({ amount: 50 })` }));
    expect(small.result).toEqual({ refunded: 50 });
    expect(small.calls![0]).toMatchObject({ state: "applied", requiresApproval: false });

    const large = expectPaused(await runtime.execute({ code: `async () => shop.refund({ amount: 500 })` }));
    expect(large.pending[0]).toMatchObject({ method: "refund", args: { amount: 500 } });
    expect(count("refund")).toBe(1);
    const done = expectCompleted(await runtime.approve({ executionId: large.executionId }));
    expect(done.result).toEqual({ refunded: 500 });
    expect(count("refund")).toBe(2);
  });

  it("R-AP-1: a requiresApproval rule that throws pauses the call", async () => {
    const { runtime, count } = setup();
    const domestic = expectCompleted(
      await runtime.execute({ code: `async () => shop.ship({ to: { country: "NL" } })` }),
    );
    expect(domestic.result).toEqual({ shipped: true });
    // The rule reads args.to.country: without `to` it throws, and the call must not slip through.
    const paused = expectPaused(await runtime.execute({ code: `async () => shop.ship({})` }));
    expect(paused.pending[0]).toMatchObject({ method: "ship", args: {} });
    expect(count("ship")).toBe(1);
  });
});

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

describe("missing connectors (R-AP-5)", () => {
  it("R-AP-5: a runtime without a connector the execution used returns MISSING_CONNECTOR naming it, before any code runs", async () => {
    const { runtime, shop, keyv, count } = setup();
    const paused = expectPaused(
      await runtime.execute({
        code: `async () => { await shop.list_items(); const order = await shop.create_order({ item: 1 }); await mail.send({ to: "ann" }); return order; }`,
      }),
    );
    const shopOnly = track(createCodemodeRuntime({ connectors: [shop], storage: keyv, limits: { timeoutMs: 5_000 } }));
    const missing = expectError(await shopOnly.approve({ executionId: paused.executionId }), "MISSING_CONNECTOR");
    expect(missing.executionId).toBe(paused.executionId);
    expect(missing.error).toContain("mail");
    expect(count("list_items")).toBe(1);
    expect(count("create_order")).toBe(0);
    // Nothing changed: the runtime that has every connector can still approve it.
    expect((await runtime.execution(paused.executionId))?.status).toBe("paused");
    const done = expectCompleted(await runtime.approve({ executionId: paused.executionId }));
    expect(done.result).toEqual({ orderId: "o-1" });
    expect(count("send")).toBe(1);
  });

  it("R-ST-3 R-AP-2: a second runtime with every connector over the same store resumes the paused execution", async () => {
    const { runtime, shop, mail, keyv, count } = setup();
    const paused = expectPaused(await runtime.execute({ code: ORDER_CODE }));
    const other = track(
      createCodemodeRuntime({ connectors: [shop, mail], storage: keyv, limits: { timeoutMs: 5_000 } }),
    );
    const done = expectCompleted(await other.approve({ executionId: paused.executionId }));
    expect(done.result).toBe("o-1");
    expect(count("list_items")).toBe(1);
    expect(count("create_order")).toBe(1);
  });
});

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

describe("outcomes are data (R-RT-1, R-RT-2)", () => {
  it("R-RT-2: completed, paused and error outcomes each carry executionId and the log as calls", async () => {
    const { runtime } = setup();
    const completed = expectCompleted(await runtime.execute({ code: `async () => (await shop.list_items()).length` }));
    expect(completed.executionId).toMatch(/\S/);
    expect(completed.calls).toHaveLength(1);

    const paused = expectPaused(await runtime.execute({ code: ORDER_CODE }));
    expect(paused.executionId).toMatch(/\S/);
    expect(paused.calls).toHaveLength(2);

    const failed = expectError(
      await runtime.execute({ code: `async () => { await shop.list_items(); throw new Error("nope"); }` }),
    );
    expect(failed.executionId).toMatch(/\S/);
    expect(failed.calls).toHaveLength(1);
    expect(new Set([completed.executionId, paused.executionId, failed.executionId]).size).toBe(3);

    const syntax = expectError(await runtime.execute({ code: `async () => { return ( }` }), "SYNTAX_ERROR");
    expect(syntax.executionId).toMatch(/\S/);
    expect(syntax.calls).toEqual([]);

    const notFound = expectError(await runtime.approve({ executionId: "missing-id" }), "NOT_FOUND");
    expect(notFound.executionId).toBe("missing-id");
    expect(notFound.calls).toEqual([]);

    const notPaused = expectError(await runtime.approve({ executionId: completed.executionId }), "NOT_PAUSED");
    expect(notPaused.executionId).toBe(completed.executionId);
    expect(notPaused.calls).toEqual(completed.calls);
  });

  it("R-RT-1 R-SB-2: a syntax error comes back as SYNTAX_ERROR with line and column, and the record says error", async () => {
    const { runtime } = setup();
    const outcome = expectError(
      await runtime.execute({ code: `async () => {\n  const x = 1;\n  return x +;\n}` }),
      "SYNTAX_ERROR",
    );
    expect(outcome.error).toMatch(/line \d+, column \d+/);
    expect((await runtime.execution(outcome.executionId))?.status).toBe("error");
  });

  it("R-RT-1 R-SB-3: an endless loop comes back as TIMEOUT and the runtime keeps working", async () => {
    const { runtime } = setup({ limits: { timeoutMs: 300 } });
    const outcome = expectError(await runtime.execute({ code: `async () => { while (true) {} }` }), "TIMEOUT");
    expect(outcome.executionId).toMatch(/\S/);
    expect(outcome.calls).toEqual([]);
    expect(expectCompleted(await runtime.execute({ code: `async () => 1 + 1` })).result).toBe(2);
  });

  it("R-RT-1: thrown values, host globals and bad input come back as outcomes, never throws", async () => {
    const { runtime } = setup();
    const thrown = expectError(
      await runtime.execute({ code: `async () => { throw new TypeError("broken plan"); }` }),
      "PROGRAM_ERROR",
    );
    expect(thrown.error).toContain("broken plan");
    const thrownString = expectError(
      await runtime.execute({ code: `async () => { throw "just a string"; }` }),
      "PROGRAM_ERROR",
    );
    expect(thrownString.error).toContain("just a string");
    const noProcess = expectError(await runtime.execute({ code: `async () => process.exit(1)` }), "PROGRAM_ERROR");
    expect(noProcess.error).toContain("process");
    const unknownTool = expectError(await runtime.execute({ code: `async () => shop.delete_everything({})` }));
    expect(unknownTool.executionId).toMatch(/\S/);
    const notCode = expectError(await runtime.execute({ code: 42 } as never));
    expect(notCode.executionId).toMatch(/\S/);
    expect(notCode.calls).toEqual([]);
    expect((await runtime.approve(undefined as never)).status).toBe("error");
    expect((await runtime.approve({ executionId: 7 } as never)).status).toBe("error");
    expect(await runtime.reject(undefined as never)).toBe(false);
    expect(await runtime.reject({ executionId: "x" } as never)).toBe(false);
  });
});

describe("configuration errors throw at creation (R-RT-1, R-CON-4)", () => {
  const tool = { execute: () => 1 };

  it("R-RT-1: two connectors with the same name throw, naming it", () => {
    const first = defineConnector({ name: "shop", tools: { a: tool } });
    const second = defineConnector({ name: "shop", tools: { b: tool } });
    expect(() => createCodemodeRuntime({ connectors: [first, second] })).toThrow(/two connectors are named "shop"/);
  });

  it("R-RT-1: the reserved name codemode throws", () => {
    const reserved: ConnectorDefinition = { name: "codemode", tools: { a: tool } };
    expect(() => createCodemodeRuntime({ connectors: [reserved] })).toThrow(/"codemode" is reserved/);
    expect(() => defineConnector(reserved)).toThrow(/"codemode" is reserved/);
  });

  it("R-CON-4: replay: reexecute with requiresApproval throws at creation, naming the tool", () => {
    const gatedRead: ConnectorDefinition = {
      name: "files",
      tools: { read_file: { replay: "reexecute", requiresApproval: true, execute: () => "x" } },
    };
    expect(() => createCodemodeRuntime({ connectors: [gatedRead] })).toThrow(/files\.read_file/);
    const conditional: ConnectorDefinition = {
      name: "files",
      tools: { read_file: { replay: "reexecute", requiresApproval: () => false, execute: () => "x" } },
    };
    expect(() => createCodemodeRuntime({ connectors: [conditional] })).toThrow(/files\.read_file/);
    const fine: ConnectorDefinition = {
      name: "files",
      tools: { read_file: { replay: "reexecute", requiresApproval: false, execute: () => "x" } },
    };
    expect(() => track(createCodemodeRuntime({ connectors: [fine] }))).not.toThrow();
  });

  it.each<[string, Partial<CodemodeRuntimeOptions>, RegExp]>([
    ["zero timeout", { limits: { timeoutMs: 0 } }, /limits\.timeoutMs/],
    ["negative timeout", { limits: { timeoutMs: -5 } }, /limits\.timeoutMs/],
    ["NaN timeout", { limits: { timeoutMs: Number.NaN } }, /limits\.timeoutMs/],
    ["tiny heap", { limits: { memoryMb: 4 } }, /limits\.memoryMb/],
    ["text maxExecutions", { maxExecutions: "ten" as never }, /maxExecutions/],
    ["bad name", { name: "has spaces" }, /name/],
    ["bad storage", { storage: {} as never }, /storage/],
  ])("R-RT-1: bad limits and options throw at creation (%s)", (_label, options, message) => {
    expect(() => createCodemodeRuntime(options)).toThrow(message);
  });
});
