/**
 * Approvals as people make them (R-AP-8, R-AP-9, R-AP-10), on memory, SQLite, Redis and
 * PostgreSQL (the last two fail in CI when the service is missing, skip elsewhere): batched
 * pauses, decide with approve / edit / deny / grant, partial decisions, refusals that change
 * nothing, and an approval policy.
 */
import { randomUUID } from "node:crypto";
import {
  type CodemodeRuntime,
  type CodemodeRuntimeOptions,
  createCodemodeRuntime,
  defineConnector,
  type ExecutionState,
} from "@codemode/core";
import { afterEach, describe, expect, it } from "vitest";
import { expectStatus, STORES, serviceCheck } from "./four-stores-fixtures.ts";

for (const store of STORES) {
  describe(`decisions on ${store.name}`, () => {
    const cannotRun = serviceCheck(store);
    const opened: Array<{ close(): Promise<unknown> }> = [];
    afterEach(async () => {
      for (const each of opened.splice(0).reverse()) await each.close().catch(() => undefined);
    });

    /** A shop whose orders and refunds need approval; `ran` has every call a tool received. */
    function shopRuntime(options: Partial<CodemodeRuntimeOptions> = {}) {
      const storage = store.open(`codemode-decide-${randomUUID().slice(0, 8)}`);
      opened.push(storage);
      const ran: Array<[string, unknown]> = [];
      const note = <T>(method: string, args: unknown, result: T): T => {
        ran.push([method, args]);
        return result;
      };
      const shop = defineConnector({
        name: "shop",
        tools: {
          read: { readOnly: true, execute: (args: { n: number }) => note("read", args, { n: args.n }) },
          order: {
            description: "Places an order.",
            inputSchema: {
              type: "object",
              properties: { sku: { type: "string" }, qty: { type: "integer", minimum: 1, maximum: 10 } },
              required: ["sku", "qty"],
              additionalProperties: false,
            },
            requiresApproval: true,
            execute: (args: { sku: string; qty: number }) => note("order", args, { ordered: args }),
          },
          refund: {
            requiresApproval: true,
            execute: (args: { n: number }) => note("refund", args, { refunded: args.n }),
          },
        },
      });
      const runtime = createCodemodeRuntime({ connectors: [shop], storage, logger: { warn() {} }, ...options });
      opened.unshift(runtime);
      return { runtime, ran };
    }

    const states = (state: ExecutionState | null) => state?.log.map((entry) => [entry.seq, entry.method, entry.state]);

    it("R-AP-8: Promise.all of two orders pauses once with both pending; a read issued meanwhile runs once; replay is exact", async () => {
      if (cannotRun()) return;
      const { runtime, ran } = shopRuntime();
      const paused = await runtime.execute({
        code: `async () => {
          const both = Promise.all([shop.order({ sku: "a", qty: 1 }), shop.order({ sku: "b", qty: 2 })]);
          const seen = await shop.read({ n: 7 });
          return [await both, seen];
        }`,
      });
      expectStatus(paused, "paused");
      expect(paused.pending.map((action) => [action.seq, action.method, action.args])).toEqual([
        [0, "order", { sku: "a", qty: 1 }],
        [1, "order", { sku: "b", qty: 2 }],
      ]);
      expect(paused.pending[0]).toMatchObject({ description: "Places an order.", inputSchema: { type: "object" } });
      expect(ran).toEqual([["read", { n: 7 }]]);
      expect((await runtime.pending(paused.executionId)).items.map((action) => action.seq)).toEqual([0, 1]);
      expect(await runtime.outcome(paused.executionId)).toMatchObject({
        status: "paused",
        pending: [{ seq: 0 }, { seq: 1 }],
      });
      const done = await runtime.approve({ executionId: paused.executionId, by: "ann" });
      expectStatus(done, "completed");
      expect(done.result).toEqual([[{ ordered: { sku: "a", qty: 1 } }, { ordered: { sku: "b", qty: 2 } }], { n: 7 }]);
      expect(ran.map(([method]) => method).sort()).toEqual(["order", "order", "read"]);
      expect(states(await runtime.execution(paused.executionId))).toEqual([
        [0, "order", "applied"],
        [1, "order", "applied"],
        [2, "read", "applied"],
      ]);
    });

    it("R-AP-9: an edited call runs with the edited arguments, keeps what was asked, and three later passes replay it without divergence", async () => {
      if (cannotRun()) return;
      const { runtime, ran } = shopRuntime();
      const code = `async () => {
        const first = await shop.order({ sku: "a", qty: 9 });
        const later = [];
        for (let n = 0; n < 3; n++) later.push(await shop.refund({ n }));
        return { first, later };
      }`;
      const paused = await runtime.execute({ code });
      expectStatus(paused, "paused");
      let outcome = await runtime.decide({
        executionId: paused.executionId,
        by: "ann",
        decisions: [{ seq: 0, decision: "edit", args: { sku: "a", qty: 2 }, reason: "at most two" }],
      });
      expect(ran).toEqual([["order", { sku: "a", qty: 2 }]]);
      for (let pass = 1; pass <= 3; pass++) {
        expectStatus(outcome, "paused");
        expect(outcome.pending.map((action) => action.seq)).toEqual([pass]);
        outcome = await runtime.approve({ executionId: paused.executionId, seq: pass });
      }
      expectStatus(outcome, "completed");
      expect(outcome.result).toEqual({
        first: { ordered: { sku: "a", qty: 2 } },
        later: [{ refunded: 0 }, { refunded: 1 }, { refunded: 2 }],
      });
      expect(ran.filter(([method]) => method === "order")).toHaveLength(1);
      const state = await runtime.execution(paused.executionId);
      expect(state?.log[0]).toMatchObject({
        args: { sku: "a", qty: 2 },
        requestedArgs: { sku: "a", qty: 9 },
        state: "applied",
        decision: { approved: true, decision: "edit", by: "ann", reason: "at most two" },
      });
    });

    it("R-AP-9: a denial the program catches lets it go on and tell the model why; the entry is denied and the tool never ran", async () => {
      if (cannotRun()) return;
      const { runtime, ran } = shopRuntime();
      const paused = await runtime.execute({
        code: `async () => {
          try {
            return await shop.order({ sku: "a", qty: 1 });
          } catch (error) {
            return { name: error.name, message: error.message };
          }
        }`,
      });
      expectStatus(paused, "paused");
      const done = await runtime.decide({
        executionId: paused.executionId,
        by: "bob",
        decisions: [{ seq: 0, decision: "deny", reason: "not this month" }],
      });
      expectStatus(done, "completed");
      expect(done.result).toEqual({
        name: "ApprovalDenied",
        message: 'shop.order({"sku":"a","qty":1}) was denied by bob: not this month',
      });
      expect(ran).toEqual([]);
      const state = await runtime.execution(paused.executionId);
      expect(state?.log[0]).toMatchObject({
        state: "denied",
        decision: { approved: false, decision: "deny", by: "bob" },
      });
    });

    it("R-AP-9: ApprovalDenied names the call: its seq, connector.method, arguments as shown, who and why, in the pass that denied it and in its replays", async () => {
      if (cannotRun()) return;
      const { runtime, ran } = shopRuntime();
      const paused = await runtime.execute({
        code: `async () => {
          const [mug, pen] = await Promise.allSettled([shop.order({ sku: "mug", qty: 1 }), shop.order({ sku: "pen", qty: 2 })]);
          const e = pen.reason;
          const denied = e && { name: e.name, message: e.message, seq: e.seq, call: e.call, args: e.args, by: e.by, reason: e.reason };
          const again = await shop.refund({ n: 1 });
          return { mug: mug.value, denied, again };
        }`,
      });
      expectStatus(paused, "paused");
      const next = await runtime.decide({
        executionId: paused.executionId,
        by: "bob",
        decisions: [
          { seq: 0, decision: "approve" },
          { seq: 1, decision: "deny", reason: "pens are out of stock" },
        ],
      });
      // The refund pauses: the pass that resumes after it replays the denial from the log.
      expectStatus(next, "paused");
      const done = await runtime.approve({ executionId: paused.executionId, by: "ann" });
      expectStatus(done, "completed");
      expect(done.result).toEqual({
        mug: { ordered: { sku: "mug", qty: 1 } },
        denied: {
          name: "ApprovalDenied",
          message: 'shop.order({"sku":"pen","qty":2}) was denied by bob: pens are out of stock',
          seq: 1,
          call: "shop.order",
          args: { sku: "pen", qty: 2 },
          by: "bob",
          reason: "pens are out of stock",
        },
        again: { refunded: 1 },
      });
      expect(ran).toEqual([
        ["order", { sku: "mug", qty: 1 }],
        ["refund", { n: 1 }],
      ]);
    });

    it("R-AP-9: an uncaught denial ends the run rejected, as reject does, and its outcome says who denied what", async () => {
      if (cannotRun()) return;
      const { runtime, ran } = shopRuntime();
      const paused = await runtime.execute({ code: `async () => shop.order({ sku: "a", qty: 1 })` });
      expectStatus(paused, "paused");
      const ended = await runtime.decide({
        executionId: paused.executionId,
        by: "bob",
        decisions: [{ seq: 0, decision: "deny", reason: "no" }],
      });
      expectStatus(ended, "error");
      expect(ended.code).toBe("APPROVAL_DENIED");
      expect(ended.error).toContain('shop.order({"sku":"a","qty":1}) was denied by bob: no');
      expect((await runtime.execution(paused.executionId))?.status).toBe("rejected");
      const read = (await runtime.outcome(paused.executionId)) ?? undefined;
      expectStatus(read, "error");
      expect([read.code, read.error]).toEqual([
        "APPROVAL_DENIED",
        `execution ${paused.executionId} was rejected: shop.order({"sku":"a","qty":1}) was denied by bob: no`,
      ]);
      expect(ran).toEqual([]);
    });

    it("R-AP-9: a grant approves the next calls of the method as they come, recorded through it, until it runs out", async () => {
      if (cannotRun()) return;
      const { runtime, ran } = shopRuntime();
      const paused = await runtime.execute({
        code: `async () => { const out = []; for (let n = 0; n < 5; n++) out.push(await shop.refund({ n })); return out; }`,
      });
      expectStatus(paused, "paused");
      const next = await runtime.decide({
        executionId: paused.executionId,
        by: "ann",
        decisions: [{ seq: 0, decision: "approve", grant: { calls: 2 } }],
      });
      expectStatus(next, "paused");
      expect(next.pending.map((action) => action.seq)).toEqual([3]);
      expect(ran.map(([, args]) => args)).toEqual([{ n: 0 }, { n: 1 }, { n: 2 }]);
      const state = await runtime.execution(paused.executionId);
      expect(state?.log.slice(0, 3).map((entry) => entry.decision)).toMatchObject([
        { approved: true, by: "ann", grant: { calls: 2 } },
        { approved: true, by: "ann", viaGrant: 0 },
        { approved: true, by: "ann", viaGrant: 0 },
      ]);
      const done = await runtime.approve({ executionId: paused.executionId });
      expectStatus(done, "paused");
      expect(done.pending.map((action) => action.seq)).toEqual([4]);
    });

    it("R-AP-9: a grant covers further calls only: an earlier call of the method still pending keeps waiting for its own decision", async () => {
      if (cannotRun()) return;
      const { runtime, ran } = shopRuntime();
      const paused = await runtime.execute({
        code: `async () => { const both = await Promise.all([shop.refund({ n: 0 }), shop.refund({ n: 1 })]); return [...both, await shop.refund({ n: 2 })]; }`,
      });
      expectStatus(paused, "paused");
      const next = await runtime.decide({
        executionId: paused.executionId,
        decisions: [{ seq: 1, decision: "approve", grant: { calls: 5 } }],
      });
      expectStatus(next, "paused");
      expect(next.pending.map((action) => action.seq)).toEqual([0]);
      expect(ran).toEqual([["refund", { n: 1 }]]);
      const done = await runtime.decide({
        executionId: paused.executionId,
        decisions: [{ seq: 0, decision: "approve" }],
      });
      expectStatus(done, "completed");
      expect(done.result).toEqual([{ refunded: 0 }, { refunded: 1 }, { refunded: 2 }]);
      const state = await runtime.execution(paused.executionId);
      expect(state?.log[2]?.decision).toMatchObject({ approved: true, viaGrant: 1 });
    });

    it("R-AP-9: decisions on some of the pending calls: those go ahead, the others stay pending, and the outcome says so", async () => {
      if (cannotRun()) return;
      const { runtime, ran } = shopRuntime();
      const paused = await runtime.execute({
        code: `async () => Promise.all([shop.order({ sku: "a", qty: 1 }), shop.refund({ n: 1 }), shop.refund({ n: 2 })])`,
      });
      expectStatus(paused, "paused");
      expect(paused.pending.map((action) => action.seq)).toEqual([0, 1, 2]);
      const partly = await runtime.decide({
        executionId: paused.executionId,
        decisions: [
          { seq: 0, decision: "approve" },
          { seq: 2, decision: "approve" },
        ],
      });
      expectStatus(partly, "paused");
      expect(partly.pending.map((action) => action.seq)).toEqual([1]);
      expect(ran.map(([method, args]) => `${method} ${JSON.stringify(args)}`).sort()).toEqual([
        'order {"sku":"a","qty":1}',
        'refund {"n":2}',
      ]);
      const done = await runtime.decide({
        executionId: paused.executionId,
        decisions: [{ seq: 1, decision: "approve" }],
      });
      expectStatus(done, "completed");
      expect(ran).toHaveLength(3);
    });

    it("R-AP-9: refusals change nothing: a seq not pending is NOT_PAUSED; arguments the schema refuses and malformed decisions are INVALID_DECISION", async () => {
      if (cannotRun()) return;
      const { runtime, ran } = shopRuntime();
      const paused = await runtime.execute({ code: `async () => shop.order({ sku: "a", qty: 1 })` });
      expectStatus(paused, "paused");
      const before = await runtime.execution(paused.executionId);
      const refusals: Array<[unknown, string, RegExp]> = [
        [
          [{ seq: 5, decision: "approve" }],
          "NOT_PAUSED",
          /action 5 is not pending; pending now: seq 0 \(shop\.order\)/,
        ],
        [[{ seq: 0, decision: "edit", args: { sku: "a", qty: 50 } }], "INVALID_DECISION", /qty/],
        [[{ seq: 0, decision: "edit", args: { sku: "a", qty: 1, extra: true } }], "INVALID_DECISION", /extra/],
        [
          [{ seq: 0, decision: "edit", args: JSON.parse('{"sku":"a","qty":1,"__proto__":{"qty":99}}') }],
          "INVALID_DECISION",
          /__proto__/,
        ],
        [[{ seq: 0, decision: "edit" }], "INVALID_DECISION", /an edit needs args/],
        [[{ seq: 0, decision: "approve", args: {} }], "INVALID_DECISION", /only an edit takes args/],
        [[{ seq: 0, decision: "maybe" }], "INVALID_DECISION", /"approve", "deny" or "edit"/],
        [[{ seq: 0, decision: "deny", grant: { calls: 2 } }], "INVALID_DECISION", /a denial cannot give a grant/],
        [[{ seq: 0, decision: "approve", grant: { calls: 0 } }], "INVALID_DECISION", /grant must be/],
        [
          [
            { seq: 0, decision: "approve" },
            { seq: 0, decision: "deny" },
          ],
          "INVALID_DECISION",
          /decided twice/,
        ],
        [[], "INVALID_DECISION", /non-empty array/],
        ["approve", "INVALID_DECISION", /non-empty array/],
      ];
      for (const [decisions, code, message] of refusals) {
        const refused = await runtime.decide({ executionId: paused.executionId, decisions: decisions as never });
        expectStatus(refused, "error");
        expect([refused.code, refused.error]).toEqual([code, expect.stringMatching(message)]);
      }
      expect(ran).toEqual([]);
      expect(await runtime.execution(paused.executionId)).toEqual(before);
      const unknown = await runtime.decide({ executionId: "nope", decisions: [{ seq: 0, decision: "approve" }] });
      expect(unknown).toMatchObject({ status: "error", code: "NOT_FOUND" });
    });

    it("R-AP-10: the policy approves, denies or asks; its decisions are recorded by policy; one that throws or is late counts as ask", async () => {
      if (cannotRun()) return;
      const warnings: string[] = [];
      const { runtime, ran } = shopRuntime({
        approvalPolicyTimeoutMs: 200,
        logger: { warn: (message: string) => warnings.push(message) },
        approvalPolicy: async (action) => {
          const { n } = action.args as { n: number };
          if (n === 1) return { decision: "approve", reason: "small" };
          if (n === 2) return { decision: "deny", reason: "duplicate" };
          if (n === 3) throw new Error("policy server down");
          if (n === 4) return new Promise(() => {});
          return "ask";
        },
      });
      const paused = await runtime.execute({
        code: `async () => {
          const out = [];
          for (const n of [1, 2, 3, 4, 5]) {
            try { out.push(await shop.refund({ n })); } catch (error) { out.push(error.name + ": " + error.message); }
          }
          return out;
        }`,
      });
      expectStatus(paused, "paused");
      expect(paused.pending.map((action) => action.seq)).toEqual([2]);
      expect(ran).toEqual([["refund", { n: 1 }]]);
      const state = await runtime.execution(paused.executionId);
      expect(state?.log.map((entry) => [entry.state, entry.decision?.by, entry.decision?.reason])).toEqual([
        ["applied", "policy", "small"],
        ["denied", "policy", "duplicate"],
        ["pending", undefined, undefined],
      ]);
      expect(warnings.join("\n")).toMatch(/threw \(policy server down\): the action waits for a person/);
      let outcome = await runtime.approve({ executionId: paused.executionId });
      expectStatus(outcome, "paused");
      expect(outcome.pending.map((action) => action.seq)).toEqual([3]);
      expect(warnings.join("\n")).toMatch(/took longer than 200 ms/);
      outcome = await runtime.approve({ executionId: paused.executionId });
      expectStatus(outcome, "paused");
      outcome = await runtime.approve({ executionId: paused.executionId });
      expectStatus(outcome, "completed");
      expect(outcome.result).toEqual([
        { refunded: 1 },
        'ApprovalDenied: shop.refund({"n":2}) was denied by policy: duplicate',
        { refunded: 3 },
        { refunded: 4 },
        { refunded: 5 },
      ]);
    });

    it("R-AP-6: two people deciding the same call at once: exactly one decision applies", async () => {
      if (cannotRun()) return;
      const { runtime, ran } = shopRuntime();
      const paused = await runtime.execute({ code: `async () => shop.order({ sku: "a", qty: 1 })` });
      expectStatus(paused, "paused");
      const [first, second] = await Promise.all([
        runtime.decide({ executionId: paused.executionId, decisions: [{ seq: 0, decision: "approve" }] }),
        runtime.decide({
          executionId: paused.executionId,
          decisions: [{ seq: 0, decision: "edit", args: { sku: "b", qty: 3 } }],
        }),
      ]);
      const statuses = [first, second].map((outcome) => (outcome.status === "error" ? outcome.code : outcome.status));
      expect(statuses.filter((status) => status === "completed")).toHaveLength(1);
      expect(statuses.filter((status) => status === "NOT_PAUSED" || status === "BUSY")).toHaveLength(1);
      expect(ran).toHaveLength(1);
    });
  });
}

describe("decide with a runtime of no store of its own", () => {
  it("R-AP-9: decide is on every runtime, and approve without a seq approves every pending action", async () => {
    const shop = defineConnector({
      name: "shop",
      tools: { order: { requiresApproval: true, execute: (args: { n: number }) => args.n } },
    });
    const runtime: CodemodeRuntime = createCodemodeRuntime({ connectors: [shop] });
    const paused = await runtime.execute({ code: "async () => Promise.all([1, 2, 3].map((n) => shop.order({ n })))" });
    expectStatus(paused, "paused");
    expect(paused.pending).toHaveLength(3);
    const done = await runtime.approve({ executionId: paused.executionId });
    expect(done).toMatchObject({ status: "completed", result: [1, 2, 3] });
    await runtime.close();
  });

  it("R-AP-8 R-AP-9: on sandbox threads too, a batch pauses once and a denial reaches the program as ApprovalDenied", async () => {
    const shop = defineConnector({
      name: "shop",
      tools: { order: { requiresApproval: true, execute: (args: { n: number }) => args.n } },
    });
    const runtime = createCodemodeRuntime({ connectors: [shop], sandboxThreads: 1 });
    try {
      const paused = await runtime.execute({
        code: "async () => Promise.all([1, 2].map((n) => shop.order({ n }).catch((error) => error.name)))",
      });
      expectStatus(paused, "paused");
      expect(paused.pending.map((action) => action.seq)).toEqual([0, 1]);
      const done = await runtime.decide({
        executionId: paused.executionId,
        decisions: [
          { seq: 0, decision: "approve" },
          { seq: 1, decision: "deny", reason: "no" },
        ],
      });
      expect(done).toMatchObject({ status: "completed", result: [1, "ApprovalDenied"] });
    } finally {
      await runtime.close();
    }
  });

  it("R-AP-8: a program that issues 2,000 gated calls at once pauses once with all of them; approving them all runs each once", async () => {
    let ran = 0;
    const shop = defineConnector({
      name: "shop",
      tools: {
        order: {
          requiresApproval: true,
          execute: (args: { n: number }) => {
            ran += 1;
            return args.n;
          },
        },
      },
    });
    const runtime = createCodemodeRuntime({ connectors: [shop] });
    const paused = await runtime.execute({
      code: "async () => (await Promise.all(Array.from({ length: 2000 }, (_, n) => shop.order({ n })))).length",
    });
    expectStatus(paused, "paused");
    expect(paused.pending).toHaveLength(2_000);
    expect((await runtime.pending(paused.executionId)).items).toHaveLength(2_000);
    const done = await runtime.approve({ executionId: paused.executionId });
    expect(done).toMatchObject({ status: "completed", result: 2_000 });
    expect(ran).toBe(2_000);
    await runtime.close();
  });

  it("R-AP-9: a run rejected or expired after a denial it caught is not taken for one a denial ended", async () => {
    const shop = defineConnector({
      name: "shop",
      tools: { order: { requiresApproval: true, execute: (args: { n: number }) => args.n } },
    });
    const runtime = createCodemodeRuntime({ connectors: [shop] });
    const code = "async () => { await shop.order({ n: 0 }).catch(() => 'denied'); return shop.order({ n: 1 }); }";
    const ended: string[] = [];
    for (const end of ["reject", "expire"] as const) {
      const paused = await runtime.execute({ code });
      expectStatus(paused, "paused");
      const again = await runtime.decide({
        executionId: paused.executionId,
        by: "ann",
        decisions: [{ seq: 0, decision: "deny", reason: "no" }],
      });
      expectStatus(again, "paused");
      if (end === "reject")
        expect(await runtime.reject({ executionId: paused.executionId, seq: 1, by: "bob" })).toBe(true);
      else {
        await new Promise((resolve) => setTimeout(resolve, 5));
        expect(await runtime.expirePaused({ maxAgeMs: 1 })).toContain(paused.executionId);
      }
      const read = (await runtime.outcome(paused.executionId)) ?? undefined;
      expectStatus(read, "error");
      expect(read.code).toBe("NOT_PAUSED");
      ended.push(read.error);
    }
    expect(ended[0]).toMatch(/rejected by bob at shop\.order$/);
    expect(ended[1]).not.toMatch(/denied/);
    await runtime.close();
  });

  it("R-AP-9: a fork keeps the original's decisions for the audit trail but not its grants: the fork's calls are asked again", async () => {
    const shop = defineConnector({
      name: "shop",
      tools: { refund: { requiresApproval: true, execute: (args: { n: number }) => args.n } },
    });
    const runtime = createCodemodeRuntime({ connectors: [shop] });
    const code =
      "async () => { const out = []; for (let n = 0; n < 4; n++) out.push(await shop.refund({ n })); return out; }";
    const paused = await runtime.execute({ code });
    expectStatus(paused, "paused");
    const done = await runtime.decide({
      executionId: paused.executionId,
      decisions: [{ seq: 0, decision: "approve", grant: { calls: 10 } }],
    });
    expectStatus(done, "completed");
    const fork = await runtime.fork({ executionId: paused.executionId, fromSeq: 2 });
    expectStatus(fork, "paused");
    expect(fork.pending.map((action) => action.seq)).toEqual([2]);
    expect((await runtime.execution(fork.executionId))?.log[0]?.decision).toMatchObject({ approved: true });
    expect((await runtime.execution(fork.executionId))?.log[0]?.decision?.grant).toBeUndefined();
    await runtime.close();
  });

  it("R-AP-8: replayCheck goes past a pending call as a pass does: calls recorded after it are checked, a denied one replays as a denial", async () => {
    const shop = (noteName: string) =>
      defineConnector({
        name: "shop",
        tools: {
          order: { requiresApproval: true, execute: (args: { n: number }) => args.n },
          [noteName]: { execute: () => "noted" },
        },
      });
    const storage = new Map();
    const { default: Keyv } = await import("keyv");
    const keyv = new Keyv({ store: storage });
    const before = createCodemodeRuntime({ connectors: [shop("note")], storage: keyv });
    const code = `async () => {
      const denied = await shop.order({ n: 0 }).catch((error) => error.name);
      const order = shop.order({ n: 1 });
      await shop.note({});
      return [denied, await order];
    }`;
    const first = await before.execute({ code });
    expectStatus(first, "paused");
    const second = await before.decide({ executionId: first.executionId, decisions: [{ seq: 0, decision: "deny" }] });
    expectStatus(second, "paused");
    expect(second.calls?.map((call) => [call.seq, call.state])).toEqual([
      [0, "denied"],
      [1, "pending"],
      [2, "applied"],
    ]);
    expect((await before.replayCheck(first.executionId)).results).toMatchObject([{ ok: true, stoppedAt: "frontier" }]);
    const after = createCodemodeRuntime({ connectors: [shop("jot")], storage: keyv });
    const report = await after.replayCheck(first.executionId);
    expect(report.results).toMatchObject([{ ok: false, divergence: { seq: 2, kind: "missing-tool" } }]);
    await before.close();
    await after.close();
  });

  it("R-AP-8: a pass with a call waiting for a person goes on through timers and ends once nothing else can happen", async () => {
    const ran: number[] = [];
    const shop = defineConnector({
      name: "shop",
      tools: {
        order: { requiresApproval: true, execute: (args: { n: number }) => args.n },
        note: { execute: (args: { n: number }) => ran.push(args.n) },
      },
    });
    const runtime = createCodemodeRuntime({ connectors: [shop] });
    try {
      const paused = await runtime.execute({
        code: `async () => {
          const order = shop.order({ n: 1 });
          await new Promise((resolve) => setTimeout(resolve, 30));
          await shop.note({ n: 2 });
          setTimeout(() => shop.note({ n: 3 }), 30);
          return order;
        }`,
      });
      expectStatus(paused, "paused");
      expect(ran).toEqual([2, 3]);
      expect(paused.calls?.map((call) => [call.seq, call.method, call.state])).toEqual([
        [0, "order", "pending"],
        [1, "note", "applied"],
        [2, "note", "applied"],
      ]);
      const done = await runtime.approve({ executionId: paused.executionId });
      expect(done).toMatchObject({ status: "completed", result: 1 });
      expect(ran).toEqual([2, 3]);
    } finally {
      await runtime.close();
    }
  });
});
