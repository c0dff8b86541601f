import type { Outcome, PendingAction } from "@codemode/core";
import type { DecisionOutcome } from "@codemode/core/adapters";
import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import { approvalToolMessage, codemodeToolContent, pausedCodemodeCalls } from "./tool-messages.js";

/** The messages that carry Code Mode outcomes through a LangChain conversation (R-LC-2). */

const action: PendingAction = {
  executionId: "exec-1",
  seq: 2,
  connector: "shop",
  method: "create_order",
  args: { sku: "mug", quantity: 2 },
};
const paused: Outcome = { status: "paused", executionId: "exec-1", pending: [action], calls: [] };

function pausedMessage(options: { artifact?: boolean; name?: string } = {}) {
  return new ToolMessage({
    id: "msg-7",
    tool_call_id: "call_1",
    name: options.name ?? "codemode",
    content: codemodeToolContent(paused),
    ...(options.artifact === false ? {} : { artifact: paused }),
  });
}

describe("pausedCodemodeCalls", () => {
  it("finds paused Code Mode results by tool name, from the artifact or else from the content", () => {
    const withArtifact = pausedMessage();
    const contentOnly = pausedMessage({ artifact: false });
    const otherTool = pausedMessage({ name: "search" });
    const completed = new ToolMessage({ tool_call_id: "call_2", name: "codemode", content: '{"status":"completed"}' });
    const messages = [new HumanMessage("Order"), new AIMessage("…"), withArtifact, contentOnly, otherTool, completed];

    const found = pausedCodemodeCalls(messages);

    expect(found.map((call) => call.message)).toEqual([withArtifact, contentOnly]);
    for (const call of found) expect(call).toMatchObject({ executionId: "exec-1", pending: [action] });
    expect(pausedCodemodeCalls(messages, { toolName: "search" }).map((call) => call.message)).toEqual([otherTool]);
  });
});

describe("approvalToolMessage (R-LC-2)", () => {
  it("R-LC-2: answers the original tool call, keeps the paused message's id, carries the outcome as artifact", () => {
    const outcome: Outcome = { status: "completed", executionId: "exec-1", result: { orderId: "o-1" }, calls: [] };
    const message = approvalToolMessage(outcome, pausedMessage());
    expect(message).toMatchObject({ tool_call_id: "call_1", id: "msg-7", name: "codemode", artifact: outcome });
    expect(JSON.parse(String(message.content))).toEqual({
      status: "completed",
      executionId: "exec-1",
      result: { orderId: "o-1" },
    });
  });

  it("R-LC-2: a rejection tells the model what did not run and why", () => {
    const rejected: DecisionOutcome = {
      status: "rejected",
      executionId: "exec-1",
      rejected: action,
      reason: "too many mugs",
    };
    const message = approvalToolMessage(rejected, { toolCallId: "call_1" });
    expect(message.id).toBeUndefined();
    expect(JSON.parse(String(message.content))).toMatchObject({
      status: "rejected",
      reason: "too many mugs",
      rejected: { connector: "shop", method: "create_order" },
    });
  });
});
