/**
 * decide on a runtime with no store of its own (R-AP-8, R-AP-9): on every runtime, on sandbox
 * threads, with 2,000 gated calls at once, and a run rejected or expired after a denial it caught.
 * Forks, replayCheck and timers are in decide-no-store-passes.test.ts.
 */
import { type CodemodeRuntime, createCodemodeRuntime, defineConnector } from "@codemode/core";
import { describe, expect, it } from "vitest";
import { expectStatus } from "./four-stores-fixtures.ts";

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
});
