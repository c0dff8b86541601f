import { afterEach, describe, expect, it } from "vitest";
import { defineConnector } from "../connectors/define-connector.js";
import { type CodemodeRuntime, createCodemodeRuntime } from "../index.js";
import type { Outcome } from "../outcome.js";
import { checkPauseReference, pauseState } from "./pause-state.js";

/** Where a pause a conversation shows stands now, after decisions made elsewhere (R-AP-2, R-AP-4). */

const runtimes: CodemodeRuntime[] = [];
afterEach(async () => {
  await Promise.all(runtimes.splice(0).map((runtime) => runtime.close()));
});

function setup(name?: string) {
  const mail = defineConnector({
    name: "mail",
    tools: { send: { requiresApproval: true, execute: (args: { to: string }) => ({ sent: args.to }) } },
  });
  const runtime = createCodemodeRuntime({ connectors: [mail], ...(name ? { name } : {}) });
  runtimes.push(runtime);
  return runtime;
}

const twoMails = `async () => { await mail.send({ to: "ann" }); await mail.send({ to: "bob" }); return "both sent"; }`;

function paused(outcome: Outcome) {
  if (outcome.status !== "paused") throw new Error(`expected a pause, got ${outcome.status}`);
  return { executionId: outcome.executionId, seq: outcome.pending[0]!.seq };
}

describe("pauseState", () => {
  it("waiting while nobody decided; decided with the new pause after an approval elsewhere; completed after the last", async () => {
    const runtime = setup();
    const first = paused(await runtime.execute({ code: twoMails }));
    expect(await pauseState(runtime, first, { code: twoMails })).toMatchObject({
      state: "waiting",
      outcome: { status: "paused", pending: [{ seq: first.seq }] },
    });

    const second = paused(await runtime.approve(first));
    expect(await pauseState(runtime, first, { code: twoMails })).toMatchObject({
      state: "decided",
      outcome: { status: "paused", pending: [{ seq: second.seq, args: { to: "bob" } }] },
    });
    expect(await pauseState(runtime, second)).toMatchObject({ state: "waiting" });

    await runtime.approve(second);
    expect(await pauseState(runtime, first)).toMatchObject({
      state: "decided",
      outcome: { status: "completed", result: "both sent" },
    });
  });

  it("R-AP-4: a rejection elsewhere is a rejected outcome with the human's reason", async () => {
    const runtime = setup();
    const first = paused(await runtime.execute({ code: twoMails }));
    await runtime.reject({ ...first, reason: "not to ann", by: "ops" });
    expect(await pauseState(runtime, first)).toMatchObject({
      state: "decided",
      outcome: {
        status: "rejected",
        reason: "not to ann",
        rejected: { connector: "mail", method: "send", args: { to: "ann" } },
      },
    });
  });

  it("missing: NOT_FOUND that names the runtime's name and storage, or the altered code", async () => {
    const runtime = setup();
    const first = paused(await runtime.execute({ code: twoMails }));
    const other = setup("billing");
    const elsewhere = await pauseState(other, first, { code: twoMails });
    expect(elsewhere).toMatchObject({
      state: "missing",
      outcome: { status: "error", code: "NOT_FOUND", error: expect.stringContaining("same name and storage") },
    });
    const altered = await pauseState(runtime, first, { code: "async () => 1" });
    expect(altered).toMatchObject({
      state: "missing",
      outcome: { code: "NOT_FOUND", error: expect.stringContaining("runs other code than this tool call") },
    });
    expect(await checkPauseReference(runtime, first, twoMails, "nothing was approved")).toBeUndefined();
  });
});

describe("pauseState with a request of several actions (R-AP-8)", () => {
  const threeMails = `async () => {
    const sent = await Promise.allSettled(["ann", "bob", "cy"].map((to) => mail.send({ to })));
    return sent.map((each) => each.status === "fulfilled" ? each.value.sent : each.reason.name);
  }`;

  it("R-AP-8: waiting while every action shown waits; one decided elsewhere makes the request decided, with the run's pause now", async () => {
    const runtime = setup();
    const outcome = await runtime.execute({ code: threeMails });
    if (outcome.status !== "paused") throw new Error(`expected a pause, got ${outcome.status}`);
    const { executionId } = outcome;
    const shown = { executionId, seq: 0, seqs: [0, 1, 2] };
    expect(await pauseState(runtime, shown, { code: threeMails })).toMatchObject({ state: "waiting" });
    // A request of some of them still waits while those do.
    expect(await pauseState(runtime, { executionId, seq: 1, seqs: [1, 2] })).toMatchObject({ state: "waiting" });

    await runtime.decide({ executionId, decisions: [{ seq: 0, decision: "approve" }] });
    expect(await pauseState(runtime, shown, { code: threeMails })).toMatchObject({
      state: "decided",
      outcome: { status: "paused", pending: [{ seq: 1 }, { seq: 2 }] },
    });
    expect(await pauseState(runtime, { executionId, seq: 1, seqs: [1, 2] })).toMatchObject({ state: "waiting" });
  });

  it("R-AP-9: decided per action elsewhere (approved, edited, denied and caught): the completed run's result shows each", async () => {
    const runtime = setup();
    const outcome = await runtime.execute({ code: threeMails });
    if (outcome.status !== "paused") throw new Error(`expected a pause, got ${outcome.status}`);
    await runtime.decide({
      executionId: outcome.executionId,
      by: "inbox",
      decisions: [
        { seq: 0, decision: "approve" },
        { seq: 1, decision: "edit", args: { to: "bea" } },
        { seq: 2, decision: "deny", reason: "not cy" },
      ],
    });
    expect(await pauseState(runtime, { executionId: outcome.executionId, seq: 0, seqs: [0, 1, 2] })).toMatchObject({
      state: "decided",
      outcome: { status: "completed", result: ["ann", "bea", "ApprovalDenied"] },
    });
  });

  it("R-AP-9: a run ended by an uncaught denial is a rejected outcome naming the action it ended on, not one the program caught", async () => {
    const runtime = setup();
    const code = `async () => {
      try { await mail.send({ to: "ann" }); } catch {}
      await mail.send({ to: "bob" });
    }`;
    const first = paused(await runtime.execute({ code }));
    const { executionId } = first;
    const second = paused(
      await runtime.decide({ executionId, decisions: [{ seq: 0, decision: "deny", reason: "not ann" }] }),
    );
    await runtime.decide({ executionId, decisions: [{ seq: second.seq, decision: "deny", reason: "not bob" }] });
    expect(await pauseState(runtime, first)).toMatchObject({
      state: "decided",
      outcome: { status: "rejected", reason: "not bob", rejected: { seq: second.seq, args: { to: "bob" } } },
    });
  });
});
