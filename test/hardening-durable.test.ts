/**
 * Issue 17.6: the durable limits have no holes. Values (arguments, results, step values, and now
 * step names) are held to 1,000,000 characters and never cut (R-DV-1); messages (thrown errors,
 * step errors, tool errors, refusals, an approver's reason) are cut to 10,000 characters with a
 * note, in the record and in what the model is handed.
 */
import { type CodemodeRuntime, createCodemodeRuntime, defineConnector, type Outcome } from "@codemode/core";
import { modelFacingOutcome } from "@codemode/core/adapters";
import { afterEach, describe, expect, it } from "vitest";

/** The longest a cut message may be: 10,000 characters and its note. */
const MESSAGE_BOUND = 10_100;

const loud = defineConnector({
  name: "loud",
  tools: {
    fail: {
      execute: async (args: { size: number }) => {
        throw new Error(`refused: ${"r".repeat(args.size)}`);
      },
    },
    send: { requiresApproval: true, execute: async () => "sent" },
  },
});

const runtimes: CodemodeRuntime[] = [];
afterEach(async () => {
  for (const runtime of runtimes.splice(0)) await runtime.close();
});

function setup(): CodemodeRuntime {
  const runtime = createCodemodeRuntime({ connectors: [loud], limits: { timeoutMs: 20_000 } });
  runtimes.push(runtime);
  return runtime;
}

/** The error text of an outcome, of its record and of what the model gets. */
async function errorTexts(runtime: CodemodeRuntime, outcome: Outcome): Promise<string[]> {
  expect(outcome.status).toBe("error");
  const model = modelFacingOutcome(outcome) as { error?: string };
  const record = await runtime.execution(outcome.executionId);
  return [outcome.status === "error" ? outcome.error : "", model.error ?? "", record?.error ?? ""];
}

describe("every message written or handed to the model is cut (issue 17.6)", () => {
  it("R-DV-1: a thrown 5M-character message is cut in the outcome, the record and the model's output", async () => {
    const runtime = setup();
    const outcome = await runtime.execute({ code: "async () => { throw new Error('t'.repeat(5_000_000)); }" });
    expect(outcome).toMatchObject({ code: "PROGRAM_ERROR" });
    for (const text of await errorTexts(runtime, outcome)) {
      expect(text.length).toBeLessThan(MESSAGE_BOUND);
      expect(text).toContain("… [4990000 more characters]");
    }
  });

  it("R-DV-1: a step's error is recorded cut, and the program sees the same message on every pass", async () => {
    const runtime = setup();
    const code = `async () => {
      let seen;
      try { await codemode.step('explode', () => { throw new Error('s'.repeat(3_000_000)); }); } catch (error) { seen = error.message.length; }
      await loud.send({});
      return seen;
    }`;
    const paused = await runtime.execute({ code });
    expect(paused.status).toBe("paused");
    const step = (paused.calls ?? []).find((call) => call.method === "step");
    expect(step?.error?.length).toBeLessThan(MESSAGE_BOUND);
    const approved = await runtime.approve({ executionId: paused.executionId });
    expect(approved).toMatchObject({ status: "completed", result: step!.error!.length });
  });

  it("R-DV-1: a tool's 2M-character error is recorded cut, and replays as the same rejection", async () => {
    const runtime = setup();
    const outcome = await runtime.execute({ code: "async () => { await loud.fail({ size: 2_000_000 }); }" });
    const [failure] = outcome.calls ?? [];
    expect(failure).toMatchObject({ state: "error" });
    expect(failure!.error!.length).toBeLessThan(MESSAGE_BOUND);
    for (const text of await errorTexts(runtime, outcome)) expect(text.length).toBeLessThan(MESSAGE_BOUND);
  });

  it("R-DV-1: a step name over 1,000,000 characters ends VALUE_TOO_LARGE and records nothing", async () => {
    const runtime = setup();
    const outcome = await runtime.execute({
      code: "async () => { await codemode.step('n'.repeat(1_000_001), () => 1); return 'went on'; }",
    });
    expect(outcome).toMatchObject({ status: "error", code: "VALUE_TOO_LARGE", calls: [] });
    if (outcome.status === "error") expect(outcome.error).toContain("the name of a codemode.step");
  });

  it("R-DV-1: an approver's reason is written cut", async () => {
    const runtime = setup();
    const paused = await runtime.execute({ code: "async () => loud.send({})" });
    const approved = await runtime.approve({
      executionId: paused.executionId,
      by: "b".repeat(50_000),
      reason: "why ".repeat(100_000),
    });
    expect(approved.status).toBe("completed");
    const decision = (await runtime.execution(paused.executionId))?.log[0]?.decision;
    expect(decision?.by?.length).toBeLessThan(MESSAGE_BOUND);
    expect(decision?.reason?.length).toBeLessThan(MESSAGE_BOUND);
  });
});
