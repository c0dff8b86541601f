import { describe, expect, it } from "vitest";
import type { Divergence, LogEntryState } from "../../outcome.js";
import { valueCodec } from "../../sandbox/prelude/value-codec.js";
import { type CallPolicy, type IssuedCall, planCall, planStep, type RecordedCall, stepArgs } from "./call-plan.js";

/** Canonical argument text, as the pass computes it from the sandbox's wire text. */
const canonical = (value: unknown) => valueCodec.canonical(valueCodec.encode(value)!);

const call = (fields: Partial<IssuedCall> = {}): IssuedCall => ({
  seq: 3,
  connector: "shop",
  method: "create_order",
  canonicalArgs: canonical({ item: 1, quantity: 2 }),
  ...fields,
});

const recorded = (state: LogEntryState, fields: Partial<RecordedCall> = {}): RecordedCall => ({
  connector: "shop",
  method: "create_order",
  canonicalArgs: canonical({ item: 1, quantity: 2 }),
  state,
  ...fields,
});

const policy = (fields: Partial<CallPolicy> = {}): CallPolicy => ({
  requiresApproval: false,
  reexecute: false,
  onInterrupted: "rerun",
  ...fields,
});

/** What `planCall` answers. */
type CallPlan = ReturnType<typeof planCall>;

const replayValue: CallPlan = { type: "replay", outcome: "value" };
const replayError: CallPlan = { type: "replay", outcome: "error" };
type ExecuteReason = Extract<CallPlan, { type: "execute" }>["reason"];
type PauseReason = Extract<CallPlan, { type: "pause" }>["reason"];
const execute = (reason: ExecuteReason): CallPlan => ({ type: "execute", reason });
const pause = (reason: PauseReason): CallPlan => ({ type: "pause", reason });

/** One row: the test's title, the log entry at the call's seq (if any), the tool's rule, the decision. */
type DecisionCase = [title: string, logged: RecordedCall | undefined, rule: Partial<CallPolicy>, decision: CallPlan];

/** The same call (`call()`) decided against each row's entry and rule. */
function itDecides(cases: readonly DecisionCase[]): void {
  for (const [title, logged, rule, decision] of cases) {
    it(title, () => {
      expect(planCall(call(), logged, policy(rule))).toEqual(decision);
    });
  }
}

describe("planCall: a call with no log entry", () => {
  itDecides([
    ["R-AP-1: pauses a new call that needs approval", undefined, { requiresApproval: true }, pause("needs-approval")],
    ["R-RP-1: runs a new call that needs no approval", undefined, {}, execute("new")],
    ["R-RP-3: runs a new reexecute call like any new call", undefined, { reexecute: true }, execute("new")],
    ["R-RP-4b: onInterrupted does not matter for a new call", undefined, { onInterrupted: "ask" }, execute("new")],
  ]);
});

describe("planCall: a call matching its log entry", () => {
  const approved = { approved: true };
  const ephemeral = { ephemeral: true };
  itDecides([
    ["R-RP-3: replays an applied entry's result", recorded("applied"), {}, replayValue],
    [
      "R-RP-3: replays an applied entry even when the tool needs approval (it was approved once)",
      recorded("applied"),
      { requiresApproval: true },
      replayValue,
    ],
    [
      "R-RP-3: runs an applied ephemeral (reexecute) entry again",
      recorded("applied", ephemeral),
      { reexecute: true },
      execute("reexecute"),
    ],
    [
      "R-RB-3: replays a reverted entry's recorded result (the program saw it once)",
      recorded("reverted"),
      {},
      replayValue,
    ],
    [
      "R-RP-3: runs a reverted ephemeral entry again",
      recorded("reverted", ephemeral),
      { reexecute: true },
      execute("reexecute"),
    ],
    ["R-CON-3: replays an error entry as the same rejection", recorded("error"), {}, replayError],
    [
      "R-CON-3: replays an error entry even when the tool needs approval (a rejected action stays rejected)",
      recorded("error", approved),
      { requiresApproval: true },
      replayError,
    ],
    [
      "R-CON-3: an ephemeral error entry replays its rejection, so the program takes the same branch",
      recorded("error", ephemeral),
      { reexecute: true },
      replayError,
    ],
    [
      "R-AP-2: runs a pending entry once it is approved",
      recorded("pending", approved),
      { requiresApproval: true },
      execute("approved"),
    ],
    [
      "R-AP-1: keeps an unapproved pending entry paused",
      recorded("pending"),
      { requiresApproval: true },
      pause("needs-approval"),
    ],
    [
      "R-AP-1: keeps an unapproved pending entry paused even if the rule would now let it through",
      recorded("pending"),
      { requiresApproval: false },
      pause("needs-approval"),
    ],
    [
      "R-AP-2: an approved pending entry runs even if the rule now says no approval is needed",
      recorded("pending", approved),
      {},
      execute("approved"),
    ],
    [
      "R-RP-4: runs an entry left executing again (same idempotency key, decided by the pass)",
      recorded("executing"),
      {},
      execute("interrupted"),
    ],
    [
      "R-RP-4: an interrupted approved call runs again without asking approval again",
      recorded("executing", approved),
      { requiresApproval: true },
      execute("interrupted"),
    ],
    [
      "R-RP-4b: an entry left executing by an onInterrupted: ask tool asks for approval again",
      recorded("executing"),
      { onInterrupted: "ask" },
      pause("interrupted"),
    ],
    [
      "R-RP-4b: asks again even when the tool needs approval and was approved before",
      recorded("executing", approved),
      { requiresApproval: true, onInterrupted: "ask" },
      pause("interrupted"),
    ],
    [
      "R-RP-3: an ephemeral entry left executing just runs again, whatever onInterrupted says",
      recorded("executing", ephemeral),
      { reexecute: true, onInterrupted: "ask" },
      execute("reexecute"),
    ],
  ]);
});

describe("planCall: key-order-insensitive arguments (R-RP-2)", () => {
  it("R-RP-2: the same arguments in another key order replay", () => {
    const issued = call({
      canonicalArgs: canonical({ quantity: 2, item: 1, nested: { b: [1, { y: 2, x: 1 }], a: null } }),
    });
    const logged = recorded("applied", {
      canonicalArgs: canonical({ nested: { a: null, b: [1, { x: 1, y: 2 }] }, item: 1, quantity: 2 }),
    });
    expect(planCall(issued, logged, policy())).toEqual({ type: "replay", outcome: "value" });
  });

  it("R-RP-2: array order still matters", () => {
    const decision = planCall(
      call({ canonicalArgs: canonical({ ids: [2, 1] }) }),
      recorded("applied", { canonicalArgs: canonical({ ids: [1, 2] }) }),
      policy(),
    );
    expect(decision.type).toBe("diverge");
  });

  it("R-RP-2: no argument matches no argument", () => {
    expect(planCall(call({ canonicalArgs: "" }), recorded("applied", { canonicalArgs: "" }), policy())).toEqual({
      type: "replay",
      outcome: "value",
    });
  });
});

describe("planCall: divergence (R-RP-2)", () => {
  const divergence = (issued: IssuedCall, logged: RecordedCall, rule: CallPolicy = policy()) => {
    const decision = planCall(issued, logged, rule);
    expect(decision.type).toBe("diverge");
    return (decision as { divergence: Divergence }).divergence.message;
  };
  const divergenceOf = (issued: IssuedCall, logged: RecordedCall): Divergence => {
    const decision = planCall(issued, logged, policy());
    if (decision.type !== "diverge") throw new Error(`expected a divergence, got ${decision.type}`);
    return decision.divergence;
  };

  /** Every part must be in the message, and so must the pointer to `codemode.step` every divergence gives. */
  const expectMentions = (message: string, parts: string[]) => {
    for (const part of [...parts, "codemode.step"]) expect(message).toContain(part);
  };

  it("R-RP-2: another connector at the same seq diverges, naming the seq, both calls and codemode.step", () => {
    const message = divergence(call({ seq: 7, connector: "mail" }), recorded("applied"));
    expectMentions(message, ["seq 7", "mail.create_order", "shop.create_order"]);
  });

  it("R-RP-2: another method at the same seq diverges, naming both methods", () => {
    const message = divergence(call({ seq: 2, method: "cancel_order" }), recorded("pending", { approved: true }));
    expectMentions(message, ["seq 2", "shop.cancel_order", "shop.create_order"]);
  });

  it("R-RP-2: other arguments at the same seq diverge, showing both", () => {
    const message = divergence(
      call({ seq: 4, canonicalArgs: canonical({ item: 1, quantity: 3 }) }),
      recorded("applied"),
    );
    expectMentions(message, ["seq 4", '{"item":1,"quantity":3}', '{"item":1,"quantity":2}']);
  });

  it("R-RP-2: the divergence is data, recorded against now: both calls decoded and each argument that differs", () => {
    const found = divergenceOf(
      call({ seq: 4, canonicalArgs: canonical({ item: 1, lines: [{ sku: "b" }], note: "gift", quantity: 3 }) }),
      recorded("applied", { canonicalArgs: canonical({ item: 1, lines: [{ sku: "a" }], quantity: 2 }) }),
    );
    expect(found).toMatchObject({
      seq: 4,
      kind: "arguments",
      recorded: { connector: "shop", method: "create_order", args: { item: 1, lines: [{ sku: "a" }], quantity: 2 } },
      now: { connector: "shop", method: "create_order", args: { item: 1, note: "gift", quantity: 3 } },
    });
    expect(found.argumentDiff).toEqual([
      { path: ".lines[0].sku", recorded: "a", now: "b" },
      { path: ".note", now: "gift" },
      { path: ".quantity", recorded: 2, now: 3 },
    ]);
    expect(found.message).toContain("3 differences, first at .lines[0].sku");
  });

  it("R-RP-2: another method is a divergence of kind call, with no argument diff", () => {
    const found = divergenceOf(call({ method: "cancel_order" }), recorded("applied"));
    expect(found.kind).toBe("call");
    expect(found.argumentDiff).toBeUndefined();
    expect(found.now?.method).toBe("cancel_order");
  });

  it("R-RP-2: a huge differing argument is shown clipped in the diff, never whole", () => {
    const found = divergenceOf(
      call({ canonicalArgs: canonical({ text: "y".repeat(100_000) }) }),
      recorded("applied", { canonicalArgs: canonical({ text: "x".repeat(100_000) }) }),
    );
    expect(JSON.stringify(found).length).toBeLessThan(2_000);
    expect(found.argumentDiff?.[0]?.path).toBe(".text");
  });

  it("R-RP-2: a missing argument where one was logged diverges and says so", () => {
    const message = divergence(call({ canonicalArgs: "" }), recorded("applied"));
    expect(message).toContain("no argument");
  });

  it("R-RP-2: long arguments are shortened in the message", () => {
    const long = canonical({ text: "x".repeat(5_000) });
    const message = divergence(call({ canonicalArgs: long }), recorded("applied"));
    expect(message).toContain("…");
    expect(message.length).toBeLessThan(1_000);
  });

  it.each<[string, RecordedCall]>([
    ["applied", recorded("applied")],
    ["applied ephemeral", recorded("applied", { ephemeral: true })],
    ["reverted", recorded("reverted")],
    ["error", recorded("error")],
    ["pending approved", recorded("pending", { approved: true })],
    ["pending unapproved", recorded("pending")],
    ["executing", recorded("executing")],
  ])("R-RP-2: divergence outranks the entry's state (%s)", (_label, logged) => {
    const decision = planCall(
      call({ canonicalArgs: canonical({ item: 9 }) }),
      logged,
      policy({ requiresApproval: true, onInterrupted: "ask" }),
    );
    expect(decision.type).toBe("diverge");
  });

  it("R-RP-2: a connector call where the log has a step diverges", () => {
    const message = divergence(
      call({ seq: 1 }),
      recorded("applied", { connector: "codemode", method: "step", canonicalArgs: stepArgs("stamp") }),
    );
    expect(message).toContain("seq 1");
    expect(message).toContain("codemode.step");
    expect(message).toContain("shop.create_order");
  });
});

describe("planStep (R-RP-5)", () => {
  const stepEntry = (name: string, state: LogEntryState): RecordedCall => ({
    connector: "codemode",
    method: "step",
    canonicalArgs: stepArgs(name),
    state,
  });

  it("R-RP-5: a new step runs its fn and is recorded", () => {
    expect(planStep(0, "stamp", undefined)).toEqual({ type: "execute", reason: "new" });
  });

  it("R-RP-5: a recorded step replays its value", () => {
    expect(planStep(0, "stamp", stepEntry("stamp", "applied"))).toEqual({ type: "replay", outcome: "value" });
  });

  it("R-RP-5: a step whose fn threw replays the same error", () => {
    expect(planStep(0, "stamp", stepEntry("stamp", "error"))).toEqual({ type: "replay", outcome: "error" });
  });

  it("R-RP-5 R-RP-2: a step's identity is its name: another name at that seq diverges, naming the seq and both names", () => {
    const decision = planStep(5, "pick", stepEntry("stamp", "applied"));
    expect(decision.type).toBe("diverge");
    const message = (decision as { divergence: Divergence }).divergence.message;
    expect(message).toContain("seq 5");
    expect(message).toContain('"pick"');
    expect(message).toContain('"stamp"');
    expect(message).toContain("codemode.step");
  });

  it("R-RP-2: a step where the log has a connector call diverges", () => {
    const decision = planStep(2, "stamp", recorded("applied"));
    expect(decision.type).toBe("diverge");
    const message = (decision as { divergence: Divergence }).divergence.message;
    expect(message).toContain("seq 2");
    expect(message).toContain("shop.create_order");
  });

  it("R-RP-5: a step's canonical argument text is its name only", () => {
    expect(stepArgs("stamp")).toBe('{"name":"stamp"}');
    expect(JSON.parse(stepArgs('we"ird'))).toEqual({ name: 'we"ird' });
  });
});
