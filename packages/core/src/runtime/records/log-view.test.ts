import { describe, expect, it } from "vitest";
import type { ExecutionHead } from "../../log/interface.js";
import { readDivergence, toExecutionState } from "./log-view.js";

const head = (extra: Partial<ExecutionHead> = {}): ExecutionHead => ({
  id: "run-1",
  status: "error",
  createdAt: 1,
  updatedAt: 2,
  connectors: ["shop"],
  seqLimit: 64,
  deterministic: true,
  seed: "s",
  clockMs: 0,
  passes: 1,
  ...extra,
});

describe("what the store holds about a failed run is read as hostile input", () => {
  it("a stored divergence is rebuilt from its known fields; anything malformed is not shown as one", () => {
    const divergence = {
      seq: 1,
      kind: "arguments",
      message: "Replay diverged at seq 1",
      recorded: { connector: "shop", method: "order", args: { n: 1 } },
      now: { connector: "shop", method: "order", args: { n: 2 } },
      argumentDiff: [{ path: ".n", recorded: 1, now: 2 }, { path: 7 }, null, { path: ".gone", recorded: 3 }],
      extra: "not a field",
      __proto__: { polluted: true },
    };
    expect(readDivergence(divergence)).toEqual({
      seq: 1,
      kind: "arguments",
      message: "Replay diverged at seq 1",
      recorded: { connector: "shop", method: "order", args: { n: 1 } },
      now: { connector: "shop", method: "order", args: { n: 2 } },
      argumentDiff: [
        { path: ".n", recorded: 1, now: 2 },
        { path: ".gone", recorded: 3 },
      ],
    });
    for (const bad of [
      null,
      "diverged",
      [],
      { seq: "1", kind: "call", message: "m" },
      { seq: 1, kind: "eval", message: "m" },
      { seq: 1, kind: "call" },
    ])
      expect(readDivergence(bad)).toBeUndefined();
    expect(readDivergence({ seq: 0, kind: "call", message: "m", recorded: { connector: 1, method: "x" } })).toEqual({
      seq: 0,
      kind: "call",
      message: "m",
    });
  });

  it("reruns are shown when well formed only; a tampered list does not break reading the run", () => {
    const state = toExecutionState(
      head({
        reruns: [
          { at: 5, error: "the store failed", code: "STORAGE_ERROR" },
          { at: "soon", error: "x" },
          { at: 6, error: "y", code: "NOT_A_CODE" },
          null,
        ] as never,
      }),
      "async () => 1",
      [],
      { divergence: { seq: "x" } as never },
    );
    expect(state.reruns).toEqual([{ at: 5, error: "the store failed", code: "STORAGE_ERROR" }]);
    expect(state.divergence).toBeUndefined();
    expect(toExecutionState(head({ reruns: "many" as never }), "", [], undefined).reruns).toBeUndefined();
  });
});
