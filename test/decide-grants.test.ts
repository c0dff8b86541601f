/**
 * Decisions about later calls (R-AP-9, R-AP-10): a grant approves the next calls of a method as
 * they come, and only further ones; an approval policy approves, denies or asks, its decisions
 * recorded by policy.
 *
 * On memory, SQLite, Redis and PostgreSQL (the last two fail in CI when the service is missing,
 * skip elsewhere).
 */
import { describe, expect, it } from "vitest";
import { useShop } from "./decide-fixtures.ts";
import { expectStatus, STORES } from "./four-stores-fixtures.ts";

for (const store of STORES) {
  describe(`decisions on ${store.name}`, () => {
    const { cannotRun, shopRuntime } = useShop(store);

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
  });
}
