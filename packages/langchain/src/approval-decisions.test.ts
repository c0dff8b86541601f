import type { PendingAction } from "@codemode/core";
import { describe, expect, it } from "vitest";
import { approvalDecisions } from "./approval-decisions.js";
import { approvalRequest } from "./approval-interrupt.js";

/** LangChain 1's human-in-the-loop decisions as runtime.decide takes them (R-AP-9, R-LC-2). */

const order = (seq: number, args: unknown, executionId = "exec-1"): PendingAction => ({
  executionId,
  seq,
  connector: "shop",
  method: "create_order",
  args,
  inputSchema: { type: "object", properties: { sku: { type: "string" } } },
});
const two = [order(1, { sku: "mug", quantity: 2 }), order(2, { sku: "pen", quantity: 5 })];

describe("approvalRequest (R-AP-8)", () => {
  it("R-AP-8: lists every pending action, each allowing approve, edit and reject, with the tool's schema for an edit form", () => {
    const request = approvalRequest(two);
    expect(request.actionRequests).toEqual([
      { name: "shop.create_order", args: { sku: "mug", quantity: 2 }, description: expect.stringContaining("call 1") },
      { name: "shop.create_order", args: { sku: "pen", quantity: 5 }, description: expect.stringContaining("call 2") },
    ]);
    expect(request.reviewConfigs).toEqual([
      {
        actionName: "shop.create_order",
        allowedDecisions: ["approve", "edit", "reject"],
        argsSchema: two[0]!.inputSchema,
      },
      {
        actionName: "shop.create_order",
        allowedDecisions: ["approve", "edit", "reject"],
        argsSchema: two[1]!.inputSchema,
      },
    ]);
    expect(request.pending).toEqual(two);
    expect(request).not.toHaveProperty("error");
  });
});

describe("approvalDecisions (R-AP-9)", () => {
  it("R-AP-9: approve, edit and reject become approve, edit with editedAction.args, and deny with the message as reason, in order, in one input", () => {
    const three = [...two, order(3, { sku: "tee", quantity: 1 })];
    const inputs = approvalDecisions(
      {
        decisions: [
          { type: "approve", by: "ann" },
          { type: "edit", editedAction: { name: "shop.create_order", args: { sku: "pen", quantity: 1 } } },
          { type: "reject", message: "out of stock", by: "ann" },
        ],
      },
      three,
    );
    expect(inputs).toEqual([
      {
        executionId: "exec-1",
        by: "ann",
        decisions: [
          { seq: 1, decision: "approve" },
          { seq: 2, decision: "edit", args: { sku: "pen", quantity: 1 } },
          { seq: 3, decision: "deny", reason: "out of stock" },
        ],
      },
    ]);
  });

  it("R-AP-9: an edit may leave the name out; a message on approve or edit is its reason", () => {
    const inputs = approvalDecisions(
      {
        decisions: [
          { type: "approve", message: "fine" },
          { type: "edit", editedAction: { args: { sku: "pen", quantity: 1 } }, message: "one is enough" },
        ],
      },
      two,
    );
    expect(inputs).toEqual([
      {
        executionId: "exec-1",
        decisions: [
          { seq: 1, decision: "approve", reason: "fine" },
          { seq: 2, decision: "edit", args: { sku: "pen", quantity: 1 }, reason: "one is enough" },
        ],
      },
    ]);
  });

  it("R-LC-2: actions of two runs (two paused calls in one model turn) make one input per run, in the order they came", () => {
    const actions = [order(0, { sku: "a" }, "exec-a"), order(4, { sku: "b" }, "exec-b"), order(5, {}, "exec-b")];
    const inputs = approvalDecisions(
      { decisions: [{ type: "reject" }, { type: "approve", by: "bob" }, { type: "approve" }] },
      actions,
    );
    expect(inputs).toEqual([
      { executionId: "exec-a", decisions: [{ seq: 0, decision: "deny" }] },
      {
        executionId: "exec-b",
        by: "bob",
        decisions: [
          { seq: 4, decision: "approve" },
          { seq: 5, decision: "approve" },
        ],
      },
    ]);
  });

  it("R-AP-9: a wrong number of decisions, or none, says how many it needs", () => {
    expect(approvalDecisions({ decisions: [{ type: "approve" }] }, two)).toMatch(
      /holding 2 decisions \(approve, edit or reject\), one per action request.*got \{"decisions":\[\{"type":"approve"\}\]\}/,
    );
    expect(approvalDecisions({ decisions: [] }, [two[0]!])).toMatch(/holding 1 decision \(/);
    expect(approvalDecisions(undefined, two)).toMatch(/got undefined$/);
    expect(approvalDecisions({ type: "approve" }, two)).toMatch(/resume with \{ decisions: \[\.\.\.\] \}/);
  });

  it("R-AP-9: malformed decisions are refused with the action they were for", () => {
    const refused = (decision: unknown) => approvalDecisions({ decisions: [{ type: "approve" }, decision] }, two);
    expect(refused({ type: "deny" })).toMatch(/^decision 1 for shop\.create_order must be \{ type: "approve" \}/);
    expect(refused(null)).toMatch(/^decision 1 for shop\.create_order must be .*got null/);
    expect(refused({ type: "edit" })).toMatch(/an edit needs editedAction: \{ args \}/);
    expect(refused({ type: "edit", editedAction: { name: "shop.create_order" } })).toMatch(/an edit needs/);
    expect(refused({ type: "edit", editedAction: { name: "shop.refund", args: {} } })).toMatch(
      /an edit cannot change which tool runs \(editedAction.name is "shop.refund"\)/,
    );
    expect(refused({ type: "reject", message: 42 })).toMatch(/message must be a string/);
    expect(refused({ type: "approve", by: ["ann"] })).toMatch(/by must be a string/);
  });

  it("R-AP-7: two people on one run's decisions are refused: one decide call records one person", () => {
    const problem = approvalDecisions(
      {
        decisions: [
          { type: "approve", by: "ann" },
          { type: "approve", by: "bob" },
        ],
      },
      two,
    );
    expect(problem).toMatch(/decision 1 for shop\.create_order: by "bob" differs from by "ann"/);
  });
});
