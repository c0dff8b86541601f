import { afterEach, describe, expect, it } from "vitest";
import { defineConnector } from "../connectors/define-connector.js";
import { type CodemodeRuntime, type CodemodeRuntimeOptions, createCodemodeRuntime } from "../index.js";
import { chatMayDecide, checkChatDecision, signPauseApproval } from "./chat-decision.js";
import { approvalReasonText, pauseApprovalReason, readPauseReference } from "./pending-approval.js";

const runtimes: CodemodeRuntime[] = [];
afterEach(async () => {
  await Promise.all(runtimes.splice(0).map((runtime) => runtime.close()));
});

const placed: unknown[] = [];
const shop = defineConnector({
  name: "shop",
  tools: {
    order: { requiresApproval: true, execute: (args: { quantity: number }) => void placed.push(args) },
    wire: { requiresApproval: true, approvers: "operator", execute: () => "sent" },
  },
});
const SECRET = "0123456789abcdef0123456789abcdef-shared";

function runtime(options: Partial<CodemodeRuntimeOptions> = {}): CodemodeRuntime {
  const created = createCodemodeRuntime({ connectors: [shop], ...options });
  runtimes.push(created);
  return created;
}

async function paused(on: CodemodeRuntime, code: string) {
  const outcome = await on.execute({ code });
  if (outcome.status !== "paused") throw new Error(`expected a pause, got ${JSON.stringify(outcome)}`);
  return { executionId: outcome.executionId, seq: outcome.pending[0]!.seq, outcome };
}

const ORDER = "async () => shop.order({ quantity: 2 })";
const WIRE = "async () => shop.wire({})";

describe("R-AP-11 who may decide: the server's signature and the application's choice", () => {
  it("a signature binds execution, seq, tool call and code: change any one and the decision is refused, nothing decided", async () => {
    const on = runtime();
    const { executionId, seq } = await paused(on, ORDER);
    const claim = { executionId, seq, toolCallId: "call-1" };
    const signature = signPauseApproval(on, claim, ORDER)!;
    expect(signature).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(await checkChatDecision(on, { ...claim, signature }, ORDER, "nothing was approved")).toBeUndefined();
    const other = await paused(on, ORDER);
    for (const [label, changed, code] of [
      ["execution", { ...claim, executionId: other.executionId }, ORDER],
      ["seq", { ...claim, seq: seq + 1 }, ORDER],
      ["tool call", { ...claim, toolCallId: "call-2" }, ORDER],
      ["code", claim, `${ORDER} `],
      ["no signature", { ...claim, signature: undefined }, ORDER],
    ] as const) {
      const refused = await checkChatDecision(on, { signature, ...changed }, code, "nothing was approved");
      expect(refused, label).toMatchObject({
        status: "error",
        code: "NOT_FOUND",
        error: expect.stringContaining("was not issued by this server"),
      });
    }
    expect(placed).toEqual([]);
  });

  it("another runtime's random key refuses; runtimes given one approvalSecret accept each other's requests", async () => {
    const first = runtime({ approvalSecret: SECRET });
    const { executionId, seq } = await paused(first, ORDER);
    const claim = { executionId, seq, toolCallId: "call-1" };
    const signature = signPauseApproval(first, claim, ORDER)!;
    expect(await checkChatDecision(runtime({ storage: undefined }), { ...claim, signature }, ORDER, "x")).toMatchObject(
      { code: "NOT_FOUND", error: expect.stringContaining("same approvalSecret") },
    );
    expect(signPauseApproval(runtime({ approvalSecret: SECRET }), claim, ORDER)).toBe(signature);
  });

  it("approvers: operator and chatApprovals (false, or a rule) refuse a signed chat decision with NOT_PAUSED; a throwing rule grants nothing", async () => {
    const cases: Array<[Partial<CodemodeRuntimeOptions>, string, boolean]> = [
      [{}, ORDER, true],
      [{}, WIRE, false],
      [{ chatApprovals: false }, ORDER, false],
      [{ chatApprovals: (action) => (action.args as { quantity: number }).quantity <= 1 }, ORDER, false],
      [{ chatApprovals: (action) => (action.args as { quantity: number }).quantity <= 5 }, ORDER, true],
      [{ chatApprovals: () => true }, WIRE, false],
      [
        {
          chatApprovals: () => {
            throw new Error("policy down");
          },
        },
        ORDER,
        false,
      ],
    ];
    for (const [options, code, allowed] of cases) {
      const on = runtime(options);
      const { executionId, seq, outcome } = await paused(on, code);
      expect(chatMayDecide(on, outcome.pending[0]!)).toBe(allowed);
      const claim = { executionId, seq, toolCallId: "call-1" };
      const refused = await checkChatDecision(
        on,
        { ...claim, signature: signPauseApproval(on, claim, code)! },
        code,
        "nothing was approved",
      );
      if (allowed) expect(refused).toBeUndefined();
      else
        expect(refused).toMatchObject({
          code: "NOT_PAUSED",
          error: expect.stringContaining("waits for an operator's decision"),
        });
    }
  });

  it("R-AP-11: an operator-only action is refused to a chat even while its run is not paused when the answer is checked", async () => {
    const on = runtime();
    const code = "async () => { await shop.order({ quantity: 1 }); return shop.wire({}); }";
    const { executionId } = await paused(on, code);
    // Approving the order elsewhere: the run goes on to the wire, an operator's.
    const atWire = await on.approve({ executionId });
    expect(atWire).toMatchObject({ status: "paused", pending: [{ seq: 1, method: "wire" }] });
    // A claim over the wire's seq, checked while the run is not paused (say, running again): still refused.
    const claim = { executionId, seq: 1, toolCallId: "call-1" };
    const signed = { ...claim, signature: signPauseApproval(on, claim, code)! };
    expect(await checkChatDecision(on, signed, code, "nothing was approved")).toMatchObject({
      code: "NOT_PAUSED",
      error: expect.stringContaining("waits for an operator's decision"),
    });
    await on.reject({ executionId, seq: 1 });
    expect(await checkChatDecision(on, signed, code, "nothing was approved")).toMatchObject({ code: "NOT_PAUSED" });
    // The order approved on the way is this test's own: the stories after it count from none.
    expect(placed.splice(0)).toEqual([{ quantity: 1 }]);
  });

  it("an object createCodemodeRuntime did not make cannot vouch for anything", async () => {
    const real = runtime();
    const { executionId, seq } = await paused(real, ORDER);
    const impostor = { execution: real.execution } as Pick<CodemodeRuntime, "execution">;
    expect(signPauseApproval(impostor, { executionId, seq, toolCallId: "c" }, ORDER)).toBeUndefined();
    expect(
      await checkChatDecision(impostor, { executionId, seq, toolCallId: "c", signature: "A".repeat(43) }, ORDER, "x"),
    ).toMatchObject({ code: "NOT_FOUND" });
  });

  it("the signature travels in the approval reason's marker, which people never see", async () => {
    const on = runtime();
    const { executionId, seq, outcome } = await paused(on, ORDER);
    const signature = signPauseApproval(on, { executionId, seq, toolCallId: "c" }, ORDER)!;
    const reason = pauseApprovalReason(outcome, { signature });
    expect(readPauseReference(reason)).toEqual({ executionId, seq, pauses: [`${seq}.1`], signature });
    expect(approvalReasonText(reason)).toBe('Approve shop.order({"quantity":2})?');
    expect(readPauseReference(pauseApprovalReason(outcome))).toEqual({ executionId, seq, pauses: [`${seq}.1`] });
  });

  it("bad options and tool settings are refused at creation", () => {
    expect(() => createCodemodeRuntime({ approvalSecret: "short" })).toThrow(
      /approvalSecret must be at least 32 bytes/,
    );
    expect(() => createCodemodeRuntime({ approvalSecret: 42 as never })).toThrow(
      /approvalSecret must be a string or a Uint8Array/,
    );
    expect(() => createCodemodeRuntime({ chatApprovals: "yes" as never })).toThrow(/chatApprovals must be/);
    expect(() =>
      defineConnector({ name: "x", tools: { t: { approvers: "boss" as never, execute: () => 1 } } }),
    ).toThrow(/approvers "boss": "chat" or "operator"/);
  });
});

describe("R-AP-11 a request of several actions: the signature covers the set shown", () => {
  const BOTH = "async () => Promise.all([shop.order({ quantity: 1 }), shop.order({ quantity: 2 })])";

  it("R-AP-11: a signature over seqs 0,1 holds for that set only: a subset, a superset or a reordering is refused and nothing is decided", async () => {
    const on = runtime();
    const { executionId, outcome } = await paused(on, BOTH);
    expect(outcome.pending.map((action) => action.seq)).toEqual([0, 1]);
    const claim = { executionId, seq: 0, seqs: [0, 1], toolCallId: "call-1" };
    const signature = signPauseApproval(on, claim, BOTH)!;
    expect(await checkChatDecision(on, { ...claim, signature }, BOTH, "nothing was approved")).toBeUndefined();
    for (const [label, changed] of [
      ["one of them", { seq: 0, seqs: undefined }],
      ["the other", { seq: 1, seqs: [1] }],
      ["one more", { seq: 0, seqs: [0, 1, 2] }],
      ["reordered", { seq: 1, seqs: [1, 0] }],
      ["seq not the first", { seq: 1, seqs: [0, 1] }],
    ] as const) {
      const refused = await checkChatDecision(on, { ...claim, ...changed, signature }, BOTH, "nothing was approved");
      expect(refused, label).toMatchObject({
        code: "NOT_FOUND",
        error: expect.stringContaining("was not issued by this server"),
      });
    }
    expect(placed).toEqual([]);
    expect((await on.execution(executionId))?.log.map((entry) => entry.state)).toEqual(["pending", "pending"]);
  });

  it("R-AP-9 R-AP-11: a request names and signs the pause it shows; one written before pause ids (seq alone) still holds for a call asked once", async () => {
    const on = runtime();
    const { executionId, seq, outcome } = await paused(on, ORDER);
    const old = signPauseApproval(on, { executionId, seq, toolCallId: "c" }, ORDER)!;
    expect(signPauseApproval(on, { executionId, seq, seqs: [seq], toolCallId: "c" }, ORDER)).toBe(old);
    const now = signPauseApproval(on, { executionId, seq, pauses: [`${seq}.1`], toolCallId: "c" }, ORDER)!;
    expect(now).not.toBe(old);
    const reason = pauseApprovalReason(outcome, {
      signature: (covered) => signPauseApproval(on, { executionId, toolCallId: "c", ...covered }, ORDER),
    });
    expect(reason).toBe(
      `Approve shop.order({"quantity":2})? [codemode execution ${executionId} seq ${seq}.1 sig ${now}]`,
    );
    expect(
      await checkChatDecision(on, { ...readPauseReference(reason)!, toolCallId: "c" }, ORDER, "x"),
    ).toBeUndefined();
    const legacy = `Approve shop.order({"quantity":2})? [codemode execution ${executionId} seq ${seq} sig ${old}]`;
    expect(
      await checkChatDecision(on, { ...readPauseReference(legacy)!, toolCallId: "c" }, ORDER, "x"),
    ).toBeUndefined();
    // The signature covers the pause: the same request naming another pause is not the server's.
    const other = reason.replace(` seq ${seq}.1 `, ` seq ${seq}.2 `);
    expect(await checkChatDecision(on, { ...readPauseReference(other)!, toolCallId: "c" }, ORDER, "x")).toMatchObject({
      code: "NOT_FOUND",
    });
  });

  it("R-AP-11: one action of the set a chat may not decide (approvers: operator) refuses the whole answer", async () => {
    const on = runtime();
    const code = "async () => Promise.all([shop.order({ quantity: 1 }), shop.wire({})])";
    const { executionId } = await paused(on, code);
    const claim = { executionId, seq: 0, seqs: [0, 1], toolCallId: "c" };
    const refused = await checkChatDecision(
      on,
      { ...claim, signature: signPauseApproval(on, claim, code)! },
      code,
      "x",
    );
    expect(refused).toMatchObject({
      code: "NOT_PAUSED",
      error: expect.stringContaining("shop.wire (seq 1 of execution"),
    });
  });
});

describe("chat approvals across processes: safe by default, loud when misconfigured (R-AP-11)", () => {
  it("a runtime without an approvalSecret says once, when it first offers a chat an approval, that other processes refuse its answers; with a secret it says nothing", async () => {
    const said: string[] = [];
    const alone = runtime({ logger: { warn: (message) => said.push(message) } });
    const { executionId, seq } = await paused(alone, ORDER);
    expect(said).toEqual([]);
    signPauseApproval(alone, { executionId, seq, toolCallId: "c" }, ORDER);
    signPauseApproval(alone, { executionId, seq, toolCallId: "d" }, ORDER);
    expect(said).toEqual([
      expect.stringMatching(
        /^\[codemode\] chat approvals are signed with a key that lives only as long as this runtime \(no approvalSecret\)/,
      ),
    ]);

    const quiet: string[] = [];
    const shared = runtime({ approvalSecret: SECRET, logger: { warn: (message) => quiet.push(message) } });
    const other = await paused(shared, ORDER);
    signPauseApproval(shared, { executionId: other.executionId, seq: other.seq, toolCallId: "c" }, ORDER);
    expect(quiet).toEqual([]);
  });

  it("an approval answered by another process without the shared secret is refused, and the refusal reaches the runtime's log", async () => {
    const said: string[] = [];
    const first = runtime();
    const { executionId, seq } = await paused(first, ORDER);
    const signature = signPauseApproval(first, { executionId, seq, toolCallId: "c" }, ORDER)!;
    // Another process (its own random key) receives the answer.
    const second = runtime({ storage: undefined, logger: { warn: (message) => said.push(message) } });
    const refused = await checkChatDecision(
      second,
      { executionId, seq, toolCallId: "c", signature },
      ORDER,
      "nothing was approved",
    );
    expect(refused).toMatchObject({ status: "error", code: "NOT_FOUND" });
    expect(said).toEqual([`[codemode] a chat's approval was refused: ${refused!.error}`]);
    expect(refused!.error).toContain("give them the same approvalSecret");
  });
});
