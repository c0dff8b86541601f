/**
 * Approvals as people make them (R-AP-8, R-AP-9): batched pauses, an edited call, decisions on
 * some of the pending calls. Denials are in decide-denials.test.ts, grants and an approval policy
 * in decide-grants.test.ts, refusals in decide-refusals.test.ts, runtimes with no store of their
 * own in decide-no-store*.test.ts.
 *
 * On memory, SQLite, Redis and PostgreSQL (the last two fail in CI when the service is missing,
 * skip elsewhere).
 */
import { describe, expect, it } from "vitest";
import { states, useShop } from "./decide-fixtures.ts";
import { expectStatus, STORES } from "./four-stores-fixtures.ts";

for (const store of STORES) {
  describe(`decisions on ${store.name}`, () => {
    const { cannotRun, shopRuntime } = useShop(store);

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
  });
}
