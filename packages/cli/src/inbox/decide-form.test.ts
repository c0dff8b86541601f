import { describe, expect, it } from "vitest";
import { readDecisionForm } from "./decide-form.js";

const read = (fields: Record<string, string>) => readDecisionForm(fields, "run-1", "ops");

describe("reading a decision form (R-AP-9)", () => {
  it("maps each button onto runtime.decide's decisions", () => {
    expect(read({ seq: "3", decision: "approve", grant: "2", reason: " ok ", by: "dana" })).toEqual({
      kind: "decide",
      executionId: "run-1",
      by: "dana",
      reason: "ok",
      decisions: [{ seq: 3, decision: "approve", grant: { calls: 2 } }],
    });
    expect(read({ seq: "0", decision: "deny", grant: "", args: "ignored" })).toEqual({
      kind: "decide",
      executionId: "run-1",
      by: "ops",
      decisions: [{ seq: 0, decision: "deny" }],
    });
    expect(read({ seq: "1", decision: "edit", args: '{"qty":2}' })).toMatchObject({
      decisions: [{ seq: 1, decision: "edit", args: { qty: 2 } }],
    });
    expect(read({ seqs: "0, 2", decision: "approve" })).toMatchObject({
      decisions: [
        { seq: 0, decision: "approve" },
        { seq: 2, decision: "approve" },
      ],
    });
    expect(read({ seq: "4", decision: "reject" })).toEqual({ kind: "reject", executionId: "run-1", seq: 4, by: "ops" });
  });

  it("keeps a `__proto__` key of edited arguments as data, for the runtime to refuse", () => {
    const request = read({ seq: "1", decision: "edit", args: '{"__proto__":{"admin":true}}' });
    expect(request).toMatchObject({ kind: "decide" });
    const [decision] = (request as { decisions: Array<{ args: object }> }).decisions;
    expect(Object.hasOwn(decision!.args, "__proto__")).toBe(true);
    expect(({} as { admin?: boolean }).admin).toBeUndefined();
  });

  it("R-AP-9: carries the pauses the page showed, so that a call asked again since is not decided; deny all covers every action shown", () => {
    expect(read({ seq: "2", pause: "2.3", decision: "approve" })).toMatchObject({
      decisions: [{ seq: 2, decision: "approve", pauseId: "2.3" }],
    });
    expect(read({ seqs: "0,2", pauses: "0.1,2.2", decision: "deny", reason: "not today" })).toMatchObject({
      reason: "not today",
      decisions: [
        { seq: 0, decision: "deny", pauseId: "0.1" },
        { seq: 2, decision: "deny", pauseId: "2.2" },
      ],
    });
    for (const [fields, problem] of [
      [{ seq: "2", pause: "3.1", decision: "approve" }, '"3.1" is not the pause of seq 2.'],
      [{ seq: "2", pause: "2.0", decision: "approve" }, '"2.0" is not the pause of seq 2.'],
      [{ seqs: "0,2", pauses: "0.1", decision: "approve" }, "The pauses do not match the actions."],
      [{ seqs: "0,2", decision: "edit", args: "{}" }, '"seqs" goes with "approve" or "deny" only.'],
    ] as const)
      expect(read(fields)).toEqual({ problem });
  });
});
