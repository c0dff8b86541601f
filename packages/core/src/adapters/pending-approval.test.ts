import { describe, expect, it } from "vitest";
import type { Outcome } from "../outcome.js";
import {
  approvalReasonText,
  describePendingAction,
  executionIdOfModelOutput,
  pauseApprovalReason,
  readPauseReference,
  toModelJson,
} from "./pending-approval.js";

const paused: Extract<Outcome, { status: "paused" }> = {
  status: "paused",
  executionId: "0b6c1d2e-3f40-4a5b-8c6d-7e8f9a0b1c2d",
  pending: [
    {
      executionId: "0b6c1d2e-3f40-4a5b-8c6d-7e8f9a0b1c2d",
      seq: 3,
      connector: "shop",
      method: "create_order",
      args: { sku: "mug", quantity: 2 },
    },
  ],
};

describe("a Code Mode pause carried by a framework's approval request (R-LC-2)", () => {
  it("names the pending action for the human and the execution and seq for the adapter", () => {
    const reason = pauseApprovalReason(paused);
    expect(reason).toBe(
      'Approve shop.create_order({"sku":"mug","quantity":2})? [codemode execution 0b6c1d2e-3f40-4a5b-8c6d-7e8f9a0b1c2d seq 3]',
    );
    expect(readPauseReference(reason)).toEqual({ executionId: paused.executionId, seq: 3 });
  });

  it("reads nothing from other reasons", () => {
    expect(readPauseReference("filesystem changes require operator review")).toBeUndefined();
    expect(readPauseReference("[codemode execution x seq 1] and more")).toBeUndefined();
    expect(readPauseReference(undefined)).toBeUndefined();
  });

  it("clips long arguments and shows bigint", () => {
    expect(describePendingAction({ connector: "a", method: "b", args: { n: 5n } })).toBe('a.b({"n":"5n"})');
    expect(describePendingAction({ connector: "a", method: "b", args: "x".repeat(50) }, 10)).toBe(
      'a.b("xxxxxxxxx… [42 more characters])',
    );
  });

  it("finds the execution id of a model-facing outcome, as a value or as JSON text", () => {
    expect(executionIdOfModelOutput({ status: "paused", executionId: "e1", pending: [] })).toBe("e1");
    expect(executionIdOfModelOutput('{"status":"completed","executionId":"e2","result":1}')).toBe("e2");
    expect(executionIdOfModelOutput({ executionId: "e3" })).toBeUndefined();
    expect(executionIdOfModelOutput("not json")).toBeUndefined();
  });

  it("turns values JSON lacks into JSON a model can read", () => {
    expect(toModelJson({ total: 12n, raw: new Uint8Array([1, 2]), gone: undefined })).toEqual({
      total: "12",
      raw: { bytes: "AQI=" },
    });
    expect(toModelJson(undefined)).toBeNull();
  });
});

describe("what a person reads before Approve", () => {
  it("R-AP-11: direction and zero-width characters in arguments are written as escapes, so they cannot reorder the text", () => {
    const text = describePendingAction({
      connector: "bank",
      method: "pay",
      args: { to: "ACME\u202e0001 ot 00001", note: "a\u200bb\u2028c" },
    });
    expect(text).toBe('bank.pay({"to":"ACME\\u202e0001 ot 00001","note":"a\\u200bb\\u2028c"})');
    expect(text).not.toMatch(/[\u202e\u200b\u2028]/);
  });
});

describe("approvalReasonText", () => {
  it("gives people the reason without the adapter's marker; other reasons pass through", () => {
    expect(approvalReasonText(pauseApprovalReason(paused))).toBe(
      'Approve shop.create_order({"sku":"mug","quantity":2})?',
    );
    expect(approvalReasonText("filesystem changes require operator review")).toBe(
      "filesystem changes require operator review",
    );
    expect(approvalReasonText(undefined)).toBeUndefined();
  });
});

describe("a request of several pending actions (R-AP-8)", () => {
  const executionId = "0b6c1d2e-3f40-4a5b-8c6d-7e8f9a0b1c2d";
  const order = (seq: number, args: unknown) => ({ executionId, seq, connector: "shop", method: "create_order", args });
  const batch = (pending: ReturnType<typeof order>[]): Extract<Outcome, { status: "paused" }> => ({
    status: "paused",
    executionId,
    pending,
  });

  it("R-AP-8: lists every action for people, one per line, and marks every seq; approvalReasonText strips the marker", () => {
    const reason = pauseApprovalReason(
      batch([order(2, { sku: "mug", quantity: 1 }), order(3, { sku: "pen", quantity: 3 })]),
      { signature: "c2lnbmVk" },
    );
    expect(reason).toBe(
      `Approve these 2 actions?\n1. shop.create_order({"sku":"mug","quantity":1})\n2. shop.create_order({"sku":"pen","quantity":3}) [codemode execution ${executionId} seq 2,3 sig c2lnbmVk]`,
    );
    expect(readPauseReference(reason)).toEqual({ executionId, seq: 2, seqs: [2, 3], signature: "c2lnbmVk" });
    expect(approvalReasonText(reason)).toBe(
      'Approve these 2 actions?\n1. shop.create_order({"sku":"mug","quantity":1})\n2. shop.create_order({"sku":"pen","quantity":3})',
    );
  });

  it("R-AP-8: covers the seqs asked for (say, those a chat may decide), says how many others wait, and signs exactly the set it shows", () => {
    const signed: unknown[] = [];
    const reason = pauseApprovalReason(batch([order(4, { n: 1 }), order(5, { n: 2 }), order(7, { n: 3 })]), {
      seqs: [7, 4],
      signature: (covered) => {
        signed.push(covered);
        return "c2ln";
      },
    });
    expect(signed).toEqual([{ seq: 4, seqs: [4, 7] }]);
    expect(readPauseReference(reason)).toEqual({ executionId, seq: 4, seqs: [4, 7], signature: "c2ln" });
    expect(approvalReasonText(reason)).toBe(
      'Approve these 2 actions?\n1. shop.create_order({"n":1})\n2. shop.create_order({"n":3})\n(1 more pending action is not part of this request and decided separately.)',
    );
  });

  it("R-AP-8: stays short however many actions wait or however long their arguments: at most 20, each key still named", () => {
    const pending = Array.from({ length: 30 }, (_, seq) =>
      order(seq, { note: "x".repeat(10_000), amount: seq * 1000 }),
    );
    const reason = pauseApprovalReason(batch(pending));
    const text = approvalReasonText(reason);
    expect(text.split("\n")).toHaveLength(22);
    expect(text).toContain('"amount":19000');
    expect(text).not.toContain('"amount":20000');
    expect(text).toContain("(10 more pending actions are not part of this request and decided separately.)");
    expect(reason.length).toBeLessThan(4_000);
    expect(readPauseReference(reason)?.seqs).toEqual(Array.from({ length: 20 }, (_, seq) => seq));
  });

  it("reads old markers of one seq as they were, and refuses a set no version writes", () => {
    expect(readPauseReference(`Approve? [codemode execution ${executionId} seq 3 sig abc]`)).toEqual({
      executionId,
      seq: 3,
      signature: "abc",
    });
    expect(readPauseReference(`Approve? [codemode execution ${executionId} seq 3,2]`)).toBeUndefined();
    expect(readPauseReference(`Approve? [codemode execution ${executionId} seq 2,2]`)).toBeUndefined();
    expect(readPauseReference(`Approve? [codemode execution ${executionId} seq 2,]`)).toBeUndefined();
  });
});
