/**
 * R-AP-8 R-AP-9: the approval form of the MCP server, and how an answer to it is read, without a
 * server: the SDK checks an answer against the form before us, so the refusals it would catch
 * first (a value outside the enum, a reason that is not text) are checked here on our own reader.
 */
import type { PendingAction } from "@codemode/core";
import { describe, expect, it } from "vitest";
import { approvalForm, MAX_FORM_ACTIONS, readFormAnswer } from "../packages/core/src/mcp/elicit-approval.ts";

const order = (seq: number, args: unknown, description?: string): PendingAction => ({
  executionId: "run-1",
  seq,
  connector: "shop",
  method: "order",
  args,
  ...(description ? { description } : {}),
});

const form = approvalForm("run-1", [order(2, { sku: "a" }), order(3, { sku: "b" })], { operatorOnly: 0, later: 0 });

describe("the approval form", () => {
  it("R-AP-8: a flat object of primitives: one approve/deny enum per action and an optional reason", () => {
    expect(Object.keys(form.requestedSchema.properties)).toEqual(["seq_2", "seq_3", "reason"]);
    expect(form.requestedSchema.properties.seq_2).toEqual({
      type: "string",
      title: 'shop.order({"sku":"a"})',
      enum: ["approve", "deny"],
      default: "approve",
    });
    expect(form.message).toContain("run-1");
  });

  it("R-AP-8: titles and descriptions are bounded and on one line, without characters that disguise them", () => {
    const long = approvalForm(
      "run-1",
      [order(1, { note: "x".repeat(5_000) }, `Orders.\n\nReally\u202e${"y".repeat(1_000)}`)],
      { operatorOnly: 2, later: 0 },
    );
    const property = long.requestedSchema.properties.seq_1 as unknown as { title: string; description: string };
    expect(property.title.length).toBeLessThanOrEqual(240);
    expect(property.description.length).toBeLessThanOrEqual(300);
    expect(property.description).toMatch(/^Orders\. Really(y+)…$/);
    expect(long.message.length).toBeLessThan(1_000);
    expect(long.message).toContain("2 more wait for an operator's decision.");
    expect(MAX_FORM_ACTIONS).toBe(20);
  });
});

describe("reading an answer", () => {
  it("R-AP-9: each choice becomes a decision; a denial without a reason says it was denied when asked", () => {
    expect(readFormAnswer(form, { seq_2: "approve", seq_3: "deny" })).toEqual({
      decisions: [
        { seq: 2, decision: "approve" },
        { seq: 3, decision: "deny", reason: "denied when asked" },
      ],
    });
    expect(readFormAnswer(form, { seq_2: "approve", seq_3: "deny", reason: " too many " })).toEqual({
      decisions: [
        { seq: 2, decision: "approve", reason: "too many" },
        { seq: 3, decision: "deny", reason: "too many" },
      ],
    });
  });

  it("R-AP-9: each decision names the pause the person was asked about, so a call asked again meanwhile is not decided by it", () => {
    const asked = approvalForm(
      "run-1",
      [
        { ...order(2, { sku: "a" }), pauseId: "2.1" },
        { ...order(3, { sku: "b" }), pauseId: "3.2" },
      ],
      { operatorOnly: 0, later: 0 },
    );
    expect(readFormAnswer(asked, { seq_2: "approve", seq_3: "deny" })).toEqual({
      decisions: [
        { seq: 2, decision: "approve", pauseId: "2.1" },
        { seq: 3, decision: "deny", reason: "denied when asked", pauseId: "3.2" },
      ],
    });
  });

  it("R-AP-9: an answer that leaves a choice out decides nothing: never a silent approve", () => {
    expect(readFormAnswer(form, undefined)).toEqual({ refused: "seq_2 was not answered" });
    expect(readFormAnswer(form, { seq_3: "deny", reason: "x" })).toEqual({ refused: "seq_2 was not answered" });
    expect(form.requestedSchema.required).toEqual(["seq_2", "seq_3"]);
  });

  it("R-AP-9: anything the form did not ask refuses the whole answer", () => {
    const refused = (content: unknown) => "refused" in readFormAnswer(form, content);
    expect(refused({ seq_2: "approve", seq_3: "yes" })).toBe(true);
    expect(refused({ seq_2: "APPROVE" })).toBe(true);
    expect(refused({ seq_2: true })).toBe(true);
    expect(refused({ seq_4: "approve" })).toBe(true);
    expect(refused({ seq_2: "approve", edit: "{}" })).toBe(true);
    expect(refused({ reason: ["x"] })).toBe(true);
    expect(refused(JSON.parse('{"__proto__": {"seq_2": "approve"}}'))).toBe(true);
    expect(refused(["approve"])).toBe(true);
    expect(refused("approve")).toBe(true);
    expect(readFormAnswer(form, { seq_9: "approve" })).toEqual({ refused: '"seq_9" was not asked' });
  });

  it("R-AP-9: a form without edit refuses edit and an args field; a form with edit (tasks/update) reads them as hostile input", () => {
    expect("refused" in readFormAnswer(form, { seq_2: "edit", seq_3: "approve" })).toBe(true);
    expect("refused" in readFormAnswer(form, { seq_2: "approve", seq_3: "approve", args_2: "{}" })).toBe(true);
    const editing = approvalForm(
      "run-1",
      [order(2, { sku: "a" }), order(3, { sku: "b" })],
      { operatorOnly: 0, later: 0 },
      { edit: true },
    );
    expect(editing.requestedSchema.properties.seq_2?.enum).toEqual(["approve", "deny", "edit"]);
    expect(editing.requestedSchema.properties.args_2).toMatchObject({ type: "string", default: '{"sku":"a"}' });
    expect(editing.requestedSchema.required).toEqual(["seq_2", "seq_3"]);
    expect(readFormAnswer(editing, { seq_2: "edit", args_2: '{"sku":"c"}', seq_3: "deny" })).toMatchObject({
      decisions: [
        { seq: 2, decision: "edit", args: { sku: "c" } },
        { seq: 3, decision: "deny", reason: "denied when asked" },
      ],
    });
    const refusal = (content: unknown) => (readFormAnswer(editing, content) as { refused?: string }).refused;
    expect(refusal({ seq_2: "edit", seq_3: "approve" })).toBe("seq_2 is edit without args_2");
    expect(refusal({ seq_2: "approve", args_2: '{"sku":"c"}', seq_3: "approve" })).toBe("args_2 is only for edit");
    expect(refusal({ seq_2: "edit", args_2: "[1]", seq_3: "approve" })).toBe("args_2 must be a JSON object");
    expect(refusal({ seq_2: "edit", args_2: "{not json", seq_3: "approve" })).toBe("args_2 must be a JSON object");
    expect(refusal({ seq_2: "edit", args_2: { sku: "c" }, seq_3: "approve" })).toMatch(
      /args_2 must be the arguments as JSON text/,
    );
    expect(refusal({ seq_2: "edit", args_2: `"${"x".repeat(100_001)}"`, seq_3: "approve" })).toMatch(/at most 100000/);
    expect(refusal({ seq_2: "approve", seq_3: "approve", args_9: "{}" })).toBe('"args_9" was not asked');
  });
});
