/**
 * Denials (R-AP-9): one the program catches lets it go on and tell the model why; ApprovalDenied
 * names the call, who and why; an uncaught one ends the run rejected.
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
  });
}
