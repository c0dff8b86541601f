/**
 * Decisions that do not apply (R-AP-9, R-AP-6): a seq not pending, arguments the schema refuses
 * and malformed decisions change nothing; of two people deciding the same call at once, exactly
 * one decision applies.
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
