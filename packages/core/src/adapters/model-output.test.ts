import { describe, expect, it } from "vitest";
import type { Outcome } from "../outcome.js";
import { modelFacingOutcome } from "./model-output.js";

/** What a model reads of an outcome (R-AI-1, R-LC-1). */

const paused: Outcome = {
  status: "paused",
  executionId: "ex-1",
  pending: [{ executionId: "ex-1", seq: 2, connector: "shop", method: "create_order", args: { sku: "mug" } }],
  calls: [],
};

describe("modelFacingOutcome", () => {
  it("R-AI-1 R-LC-1: a pause says where a person approves it, that the run resumes by itself and who reports the result", () => {
    const shown = modelFacingOutcome(paused);
    expect(shown).toEqual({
      status: "paused",
      executionId: "ex-1",
      pending: [{ seq: 2, connector: "shop", method: "create_order", args: { sku: "mug" } }],
      message:
        "Paused: a person must approve the pending action (in the app, its approval inbox or `codemode approve`); the run then resumes by itself. Tell the user what waits; do not re-issue the code. The app reports the result.",
    });
  });

  it("R-AP-8: a pause of 25 actions shows the model the first 20 and counts the rest", () => {
    const many: Outcome = {
      status: "paused",
      executionId: "ex-1",
      pending: Array.from({ length: 25 }, (_, seq) => ({
        executionId: "ex-1",
        seq,
        connector: "shop",
        method: "order",
        args: { seq },
      })),
      calls: [],
    };
    const shown = modelFacingOutcome(many);
    if (shown.status !== "paused") throw new Error("expected a pause");
    expect(shown.pending.map((action) => action.seq)).toEqual(Array.from({ length: 20 }, (_, seq) => seq));
    expect(shown.morePending).toBe(5);
    expect(modelFacingOutcome(paused)).not.toHaveProperty("morePending");
  });

  it("R-RP-2: a REPLAY_DIVERGENCE carries what differs, recorded against now, without the call log", () => {
    const divergence = {
      seq: 1,
      kind: "arguments" as const,
      recorded: { connector: "shop", method: "create_order", args: { quantity: 2 } },
      now: { connector: "shop", method: "create_order", args: { quantity: 3 } },
      argumentDiff: [{ path: ".quantity", recorded: 2, now: 3 }],
      message: "Replay diverged at seq 1: …",
    };
    const shown = modelFacingOutcome({
      status: "error",
      executionId: "ex-2",
      code: "REPLAY_DIVERGENCE",
      error: divergence.message,
      divergence,
      calls: [],
    });
    expect(shown).toEqual({
      status: "error",
      executionId: "ex-2",
      code: "REPLAY_DIVERGENCE",
      error: divergence.message,
      divergence,
    });
  });
});
