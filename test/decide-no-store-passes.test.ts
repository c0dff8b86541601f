/**
 * Decisions and the passes around them, on a runtime with no store of its own (R-AP-8, R-AP-9): a
 * fork keeps the original's decisions but not its grants; replayCheck goes past a pending call; a
 * pass with a call waiting for a person goes on through timers.
 */
import { createCodemodeRuntime, defineConnector } from "@codemode/core";
import { describe, expect, it } from "vitest";
import { expectStatus } from "./four-stores-fixtures.ts";

describe("decide with a runtime of no store of its own", () => {
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
