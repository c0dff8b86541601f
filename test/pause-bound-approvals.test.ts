/**
 * Every approval answers exactly one pause (R-AP-9): a call interrupted while it ran, with
 * `onInterrupted: "ask"`, is asked again in a new pause; an answer given for the earlier pause (a
 * stale page, a retried request, an old signed chat answer) decides nothing, and a grant the call
 * ran through stays spent. The crash is the state a host leaves when it dies inside the call: the
 * entry `executing`, no result (written into the store as such a host leaves it).
 */
import { type CodemodeRuntime, createCodemodeRuntime, type Outcome } from "@codemode/core";
import Keyv from "keyv";
import { afterEach, describe, expect, it } from "vitest";
import { cardCharger, crashInside } from "./pause-fixtures.ts";

const runtimes: CodemodeRuntime[] = [];
afterEach(async () => {
  await Promise.all(runtimes.splice(0).map((runtime) => runtime.close()));
});

function setup() {
  const { connector, charged } = cardCharger("shop");
  const keyv = new Keyv();
  const runtime = createCodemodeRuntime({ connectors: [connector], storage: keyv, logger: { warn() {} } });
  runtimes.push(runtime);
  return { runtime, charged, crashInside: (executionId: string, seq: number) => crashInside(keyv, executionId, seq) };
}

function paused(outcome: Outcome) {
  if (outcome.status !== "paused") throw new Error(`expected a pause, got ${JSON.stringify(outcome)}`);
  return outcome;
}

const CHARGES = (cards: string[]) => `async () => {
  const done = [];
  for (const card of ${JSON.stringify(cards)}) {
    try { done.push((await shop.charge({ card })).charged); } catch (error) { done.push(error.name); }
  }
  return done;
}`;

describe("an approval answers one pause (R-AP-9)", () => {
  it("R-AP-9: a pending action names its pause; asked again after a crash inside it, it waits in a new one, and an answer to the old one decides nothing", async () => {
    const { runtime, charged, crashInside } = setup();
    const first = paused(await runtime.execute({ code: CHARGES(["visa", "amex"]) }));
    expect(first.pending.map((action) => [action.seq, action.pauseId])).toEqual([[0, "0.1"]]);
    const oldAnswer = { seq: 0, decision: "approve" as const, pauseId: "0.1" };

    // Approved for the pause it answers: it runs; the run pauses at the next charge.
    paused(await runtime.decide({ executionId: first.executionId, by: "ann", decisions: [oldAnswer] }));
    expect(charged).toEqual(["visa"]);

    // The host dies inside that charge; recovery asks again (the card may have been charged).
    await crashInside(first.executionId, 0);
    const again = paused(await runtime.approve({ executionId: first.executionId, seq: 1 }));
    expect(again.pending.map((action) => [action.seq, action.pauseId])).toEqual([[0, "0.2"]]);

    // The earlier answer, sent again (an old page, a retried request): refused, nothing runs.
    const stale = await runtime.decide({ executionId: first.executionId, by: "ann", decisions: [oldAnswer] });
    expect(stale).toMatchObject({ status: "error", code: "NOT_PAUSED" });
    expect((stale as { error: string }).error).toBe(
      "seq 0 (shop.charge) was asked again since this answer was given (it answers pause 0.1; the call now waits in pause 0.2): nothing was decided; decide it again as it is asked now",
    );
    expect(charged).toEqual(["visa"]);
    expect((await runtime.execution(first.executionId))?.log[0]).toMatchObject({ state: "pending", pauseId: "0.2" });

    // Answered as it is asked now: it runs again, under the same idempotency key.
    const done = await runtime.decide({
      executionId: first.executionId,
      by: "ann",
      decisions: [{ seq: 0, decision: "approve", pauseId: "0.2" }],
    });
    expect(done).toMatchObject({ status: "completed", result: ["visa", "amex"] });
    expect(charged).toEqual(["visa", "visa", "amex"]);
  });

  it("R-AP-9: a grant is counted from what ran through it: a call it approved, asked again after a crash and denied, does not give it back", async () => {
    const { runtime, charged, crashInside } = setup();
    const first = paused(await runtime.execute({ code: CHARGES(["a", "b", "c", "d"]) }));
    // One more call of the method granted: b runs through the grant, c waits.
    const atC = paused(
      await runtime.decide({
        executionId: first.executionId,
        by: "ann",
        decisions: [{ seq: 0, decision: "approve", grant: { calls: 1 } }],
      }),
    );
    expect(atC.pending.map((action) => action.seq)).toEqual([2]);
    expect(charged).toEqual(["a", "b"]);

    // The host died inside b; c is approved meanwhile; the resumed pass asks about b again.
    await crashInside(first.executionId, 1);
    const askedB = paused(await runtime.approve({ executionId: first.executionId, seq: 2, by: "ann" }));
    expect(askedB.pending.map((action) => [action.seq, action.pauseId])).toEqual([[1, "1.2"]]);

    // Denied: c runs (it was approved), and d waits for a person: the grant was spent on b.
    const atD = paused(
      await runtime.decide({
        executionId: first.executionId,
        by: "ann",
        decisions: [{ seq: 1, decision: "deny", reason: "charged already", pauseId: "1.2" }],
      }),
    );
    expect(atD.pending.map((action) => action.seq)).toEqual([3]);
    expect(charged).toEqual(["a", "b", "c"]);
    const log = (await runtime.execution(first.executionId))?.log ?? [];
    expect(log.map((entry) => [entry.seq, entry.state, entry.decision?.viaGrant])).toEqual([
      [0, "applied", undefined],
      [1, "denied", undefined],
      [2, "applied", undefined],
      [3, "pending", undefined],
    ]);
  });

  it("R-AP-9: a pauseId that is not a string is refused as a malformed decision", async () => {
    const { runtime } = setup();
    const first = paused(await runtime.execute({ code: CHARGES(["a"]) }));
    const refused = await runtime.decide({
      executionId: first.executionId,
      decisions: [{ seq: 0, decision: "approve", pauseId: 1 as never }],
    });
    expect(refused).toMatchObject({ status: "error", code: "INVALID_DECISION" });
  });
});
