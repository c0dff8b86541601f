import Keyv from "keyv";
import { afterEach, describe, expect, it } from "vitest";
import { defineConnector } from "../connectors/define-connector.js";
import { type CodemodeRuntime, type CodemodeRuntimeOptions, createCodemodeRuntime } from "../index.js";
import { type DecisionOutcome, decidePendingAction, modelFacingDecision } from "./decide-pending-action.js";

/** Decisions applied once, and re-applied from the log by loops that re-run their step (R-AP-2, R-AP-4, R-AP-7). */

// The adapters' tests have look-alike fixtures (langchain's middleware test, ai-sdk's testing/outage-store.ts),
// kept apart on purpose: core's tests import nothing from an adapter package.
const runtimes: CodemodeRuntime[] = [];
afterEach(async () => {
  await Promise.all(runtimes.splice(0).map((runtime) => runtime.close()));
});

function runtimeOver(options: CodemodeRuntimeOptions): CodemodeRuntime {
  const runtime = createCodemodeRuntime(options);
  runtimes.push(runtime);
  return runtime;
}

/** `mail.send` needs approval; `sent` lists whom it really mailed. */
function mailConnector(sent: string[] = []) {
  const send = (args: { to: string }) => {
    sent.push(args.to);
    return { sent: args.to };
  };
  return defineConnector({ name: "mail", tools: { send: { requiresApproval: true, execute: send } } });
}

const twoMails = `async () => {
  await mail.send({ to: "ann" });
  await mail.send({ to: "bob" });
  return "both sent";
}`;

function pendingOf(outcome: DecisionOutcome) {
  if (outcome.status !== "paused") throw new Error(`expected a pause, got ${JSON.stringify(outcome)}`);
  return outcome.pending[0]!;
}

/** `twoMails` paused at its first mail; `decideFirst` answers that pause. */
async function pausedAtFirstMail() {
  const sent: string[] = [];
  const runtime = runtimeOver({ connectors: [mailConnector(sent)] });
  const first = pendingOf(await runtime.execute({ code: twoMails }));
  const decideFirst = (decision: { approved: boolean; by?: string; reason?: string }) =>
    decidePendingAction(runtime, { executionId: first.executionId, seq: first.seq, ...decision });
  return { runtime, sent, first, decideFirst };
}

describe("decidePendingAction", () => {
  it("approves: the run resumes and pauses at the next gated call (R-AP-2)", async () => {
    const { sent, decideFirst } = await pausedAtFirstMail();
    const next = await decideFirst({ approved: true, by: "ops" });
    expect(pendingOf(next)).toMatchObject({ connector: "mail", method: "send", args: { to: "bob" } });
    expect(sent).toEqual(["ann"]);
  });

  it("rejects: the outcome names the rejected action and the reason; nothing ran (R-AP-4)", async () => {
    const { sent, first, decideFirst } = await pausedAtFirstMail();
    const outcome = await decideFirst({ approved: false, reason: "not today" });
    expect(outcome).toMatchObject({
      status: "rejected",
      reason: "not today",
      rejected: { seq: first.seq, method: "send", args: { to: "ann" } },
    });
    expect(sent).toEqual([]);
    expect(modelFacingDecision(outcome)).toMatchObject({
      status: "rejected",
      reason: "not today",
      message: expect.stringContaining("did not run"),
    });
    expect(modelFacingDecision(outcome)).not.toHaveProperty("calls");
  });

  it("replays already applied decisions from the log: the same answers again, nothing runs twice", async () => {
    const { runtime, sent, decideFirst } = await pausedAtFirstMail();
    const second = pendingOf(await decideFirst({ approved: true }));
    const decideSecond = () =>
      decidePendingAction(runtime, { executionId: second.executionId, seq: second.seq, approved: true });
    expect(await decideSecond()).toMatchObject({ status: "completed", result: "both sent" });

    // A loop that re-runs from the top walks the same decisions again.
    expect(pendingOf(await decideFirst({ approved: true }))).toMatchObject({ seq: second.seq, args: { to: "bob" } });
    expect(await decideSecond()).toMatchObject({ status: "completed", result: "both sent" });
    expect(sent).toEqual(["ann", "bob"]);
  });

  it("replays a rejection from the log", async () => {
    const { decideFirst } = await pausedAtFirstMail();
    await decideFirst({ approved: false, reason: "no" });
    expect(await decideFirst({ approved: false })).toMatchObject({ status: "rejected", reason: "no" });
  });

  it("a decision that contradicts the log changes nothing and says NOT_PAUSED (R-AP-3)", async () => {
    const { runtime, sent, decideFirst } = await pausedAtFirstMail();
    await decideFirst({ approved: false });
    expect(await decideFirst({ approved: true })).toMatchObject({ status: "error", code: "NOT_PAUSED" });
    expect(await decidePendingAction(runtime, { executionId: "missing", seq: 0, approved: false })).toMatchObject({
      status: "error",
      code: "NOT_PAUSED",
    });
    expect(sent).toEqual([]);
  });
});

describe("decidePendingAction while the store is down (R-RT-3)", () => {
  it("a rejection that cannot reach the store is STORAGE_ERROR data, not NOT_PAUSED and not a throw", async () => {
    // A Map behind Keyv whose every method fails while the store is "down".
    const data = new Map<string, unknown>();
    const state = { down: false };
    const store = Object.fromEntries(
      (["get", "set", "delete", "clear"] as const).map((method) => [
        method,
        async (...args: unknown[]) => {
          if (state.down) throw new Error("connection refused");
          return (data[method] as (...values: unknown[]) => unknown).apply(data, args);
        },
      ]),
    );
    const runtime = runtimeOver({ connectors: [mailConnector()], storage: new Keyv({ store }) as never });
    const paused = await runtime.execute({ code: twoMails });
    const action = pendingOf(paused);
    state.down = true;
    const rejected = await decidePendingAction(runtime, {
      executionId: action.executionId,
      seq: action.seq,
      approved: false,
    });
    const approved = await decidePendingAction(runtime, {
      executionId: action.executionId,
      seq: action.seq,
      approved: true,
    });
    state.down = false;
    expect(rejected).toMatchObject({ status: "error", code: "STORAGE_ERROR" });
    expect(approved).toMatchObject({ status: "error", code: "STORAGE_ERROR" });
    expect((await runtime.execution(action.executionId))?.status).toBe("paused");
  });
});
