import { afterEach, describe, expect, it } from "vitest";
import { defineConnector } from "../connectors/define-connector.js";
import type { Outcome } from "../outcome.js";
import { type CodemodeRuntime, createCodemodeRuntime } from "../runtime/create-runtime.js";
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
