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
