/**
 * Values recorded once and replayed: codemode.step runs its fn once and replays its value or
 * error (R-RP-5); Date.now, Math.random and the other clocks and random sources read the same on
 * every pass, seeded by the execution id (R-SB-6).
 */
import { describe, expect, it } from "vitest";
import { expectCompleted, expectPaused } from "./outcome-fixtures.ts";
import { closeRuntimesAfterEach, setup } from "./replay-fixtures.ts";

closeRuntimesAfterEach();

describe("steps (R-RP-5)", () => {
  it("R-RP-5: codemode.step runs fn once; after approve its recorded value replays and the gated call gets the same args", async () => {
    const { runtime, calls } = setup({ deterministic: false });
    const paused = expectPaused(
      await runtime.execute({
        code: `async () => {
          const pick = await codemode.step("pick", () => { console.log("fn ran"); return Math.random(); });
          await shop.create_order({ pick });
          return pick;
        }`,
      }),
    );
    expect(paused.logs).toEqual(["fn ran"]);
    const pick = (paused.pending[0]!.args as { pick: number }).pick;
    expect(typeof pick).toBe("number");
    const done = expectCompleted(await runtime.approve({ executionId: paused.executionId }));
    expect(done.result).toBe(pick);
    expect(done.logs).toBeUndefined();
    expect(calls.create_order![0]!.args).toEqual({ pick });
    expect(done.calls![0]).toMatchObject({
      seq: 0,
      connector: "codemode",
      method: "step",
      state: "applied",
      result: pick,
    });
  });

  it("R-RP-5: a step whose fn threw replays the same error without running fn again", async () => {
    const { runtime } = setup();
    const paused = expectPaused(
      await runtime.execute({
        code: `async () => {
          let seen;
          try {
            await codemode.step("boom", () => { console.log("fn ran"); throw new Error("no stock"); });
          } catch (error) {
            seen = error.message;
          }
          await shop.create_order({ seen });
          return seen;
        }`,
      }),
    );
    expect(paused.logs).toEqual(["fn ran"]);
    const done = expectCompleted(await runtime.approve({ executionId: paused.executionId }));
    expect(done.logs).toBeUndefined();
    const seen = (paused.pending[0]!.args as { seen: string }).seen;
    expect(seen).toContain("no stock");
    expect(done.result).toBe(seen);
  });
});

describe("replay-stable clock and randomness (R-SB-6)", () => {
  it("R-SB-6: Date.now, new Date, Math.random, randomUUID and getRandomValues read the same on every pass", async () => {
    const { runtime, calls } = setup();
    const paused = expectPaused(
      await runtime.execute({
        code: `async () => {
          const seen = {
            now: Date.now(),
            date: new Date().toISOString(),
            random: [Math.random(), Math.random()],
            uuid: crypto.randomUUID(),
            bytes: Array.from(crypto.getRandomValues(new Uint8Array(8))),
          };
          await shop.create_order(seen);
          return seen;
        }`,
      }),
    );
    const seenAtPause = paused.pending[0]!.args as {
      now: number;
      date: string;
      random: number[];
      uuid: string;
      bytes: number[];
    };
    expect(new Date(seenAtPause.now).toISOString()).toBe(seenAtPause.date);
    expect(seenAtPause.random[0]).not.toBe(seenAtPause.random[1]);
    expect(seenAtPause.uuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const done = expectCompleted(await runtime.approve({ executionId: paused.executionId }));
    expect(done.result).toEqual(seenAtPause);
    expect(calls.create_order![0]!.args).toEqual(seenAtPause);
  });

  it("R-SB-6: two executions of the same code get different random values (the seed is the execution id)", async () => {
    const { runtime } = setup();
    const code = `async () => [Math.random(), crypto.randomUUID()]`;
    const first = expectCompleted(await runtime.execute({ code }));
    const second = expectCompleted(await runtime.execute({ code }));
    expect(first.result).not.toEqual(second.result);
  });
});
