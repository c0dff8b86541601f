import type { CodemodeRuntime, Outcome } from "@codemode/core";
import { generateText, MissingToolResultsError, type ModelMessage, stepCountIs } from "ai";
import { describe, expect, it } from "vitest";
import { approvalToolResult, continueAfterApproval } from "./approval-messages.js";
import { createCodemodeTool } from "./create-codemode-tool.js";
import { syncModelApprovals } from "./sync-model-approvals.js";
import { chatSettings } from "./testing/approvals.js";
import { runtimesClosedAfterEach } from "./testing/runtimes.js";
import { lastToolResultValue, type Prompt, scriptedModel, toolResultsIn } from "./testing/scripted-model.js";
import { orderMugs } from "./testing/shop.js";

const { shop } = runtimesClosedAfterEach();

const reportOrder = (prompt: Prompt) => ({ text: `Result: ${JSON.stringify(lastToolResultValue(prompt))}` });

/** A chat whose model ordered two mugs through an AI SDK approval request; the order waits in the runtime. */
async function orderAwaitingApproval() {
  const { runtime, orders } = shop();
  const { model, prompts } = scriptedModel([{ code: orderMugs }, reportOrder]);
  const settings = chatSettings(runtime);
  const messages: ModelMessage[] = [{ role: "user", content: "Order two mugs." }];
  const first = await generateText({ model, ...settings, messages });
  messages.push(...first.responseMessages);
  const [pending] = (await runtime.pending()).items;
  return { runtime, orders, model, prompts, settings, messages, pending: pending! };
}

describe("continueAfterApproval", () => {
  it("R-LC-2: pause as a tool result → runtime.approve → the model's next prompt holds the real result in place of the pause", async () => {
    const { runtime, orders } = shop();
    const { model, prompts } = scriptedModel([
      { code: orderMugs },
      { text: "Your order waits for approval." },
      reportOrder,
    ]);
    const tools = { codemode: createCodemodeTool(runtime) };
    const messages: ModelMessage[] = [{ role: "user", content: "Order two mugs." }];
    const first = await generateText({ model, tools, stopWhen: stepCountIs(5), messages });
    const paused = first.steps[0]!.toolResults[0]!.output as Extract<Outcome, { status: "paused" }>;
    expect(paused.status).toBe("paused");

    // Later, perhaps in another process: a human approves from a dashboard.
    const outcome = await runtime.approve({ executionId: paused.executionId, seq: paused.pending[0]!.seq, by: "ann" });
    const next = await generateText({
      model,
      tools,
      stopWhen: stepCountIs(5),
      messages: continueAfterApproval([...messages, ...first.responseMessages], outcome),
    });

    expect(orders).toEqual([{ sku: "mug-logo", quantity: 2 }]);
    const last = prompts.at(-1)!;
    // The call keeps exactly one result, now the real one; the model then gets a turn.
    expect(toolResultsIn(last)).toEqual([
      {
        toolCallId: "call-1",
        output: {
          type: "json",
          value: {
            status: "completed",
            executionId: paused.executionId,
            result: { orderId: "ord-1", total: 18 },
            // R-AP-9: what the person approved, and what came of it.
            decided: [
              {
                seq: 1,
                call: "shop.create_order",
                args: { sku: "mug-logo", quantity: 2 },
                decision: "approved",
                by: "ann",
                outcome: "ran",
                result: '{"orderId":"ord-1","sku":"mug-logo","quantity":2}',
              },
            ],
          },
        },
      },
    ]);
    expect(last.at(-1)).toMatchObject({
      role: "user",
      content: [
        {
          type: "text",
          text: `Code Mode execution ${paused.executionId} went on after approval; the codemode result above now shows how it ended (completed).`,
        },
      ],
    });
    expect(next.text).toBe(`Result: ${JSON.stringify((toolResultsIn(last)[0]!.output as { value: unknown }).value)}`);
  });

  it("R-LC-2: a call whose AI SDK approval request was settled out of band gets its tool result", async () => {
    const { runtime, model, prompts, settings, messages, pending } = await orderAwaitingApproval();

    const outcome = await runtime.approve({ executionId: pending.executionId, seq: pending.seq });
    const continued = continueAfterApproval(messages, outcome);
    expect(continued.at(-1)).toEqual(approvalToolResult(outcome, { toolCallId: "call-1", toolName: "codemode" }));
    await generateText({ model, ...settings, messages: continued });

    expect(lastToolResultValue(prompts.at(-1)!)).toMatchObject({ status: "completed", result: { orderId: "ord-1" } });
  });

  it("R-LC-2: an execution the conversation does not mention is reported in a user message", () => {
    const outcome: Outcome = { status: "completed", executionId: "e-1", result: 42n, calls: [] };
    const messages: ModelMessage[] = [{ role: "user", content: "Hi" }];
    const continued = continueAfterApproval(messages, outcome);
    expect(continued).toEqual([
      ...messages,
      {
        role: "user",
        content:
          'Code Mode execution e-1 went on after approval: {"status":"completed","executionId":"e-1","result":"42"}',
      },
    ]);
    expect(messages).toHaveLength(1);
  });

  it("R-LC-2: approvalToolResult answers the original call as the tool would, without calls", () => {
    const outcome: Outcome = {
      status: "completed",
      executionId: "e-1",
      result: { ok: true },
      logs: ["hello"],
      calls: [
        { seq: 0, connector: "a", method: "b", args: {}, requiresApproval: false, state: "applied", startedAt: 0 },
      ],
    };
    expect(approvalToolResult(outcome, { toolCallId: "call-7", toolName: "codemode" })).toEqual({
      role: "tool",
      content: [
        {
          type: "tool-result",
          toolCallId: "call-7",
          toolName: "codemode",
          output: {
            type: "json",
            value: { status: "completed", executionId: "e-1", result: { ok: true }, logs: ["hello"] },
          },
        },
      ],
    });
  });
});

/** Syncs `messages` and expects the approval's tool message to hold the response, then a result matching `value`. */
async function expectSyncedResult(messages: ModelMessage[], runtime: CodemodeRuntime, value: object) {
  expect((await syncModelApprovals(messages, runtime))[2]).toMatchObject({
    role: "tool",
    content: [{ type: "tool-approval-response" }, { type: "tool-result", output: { value } }],
  });
}

describe("syncModelApprovals", () => {
  it("R-LC-2: approved on a dashboard, then a new user message: no `Tool result is missing`; the model sees the program and its result", async () => {
    const { runtime, orders, model, prompts, settings, messages, pending } = await orderAwaitingApproval();
    await runtime.approve({ executionId: pending.executionId, seq: pending.seq });
    messages.push({ role: "user", content: "Did my order go through?" });

    await expect(generateText({ model, ...settings, messages })).rejects.toSatisfy(MissingToolResultsError.isInstance);
    const synced = await syncModelApprovals(messages, runtime);
    expect(synced[2]).toMatchObject({
      role: "tool",
      content: [
        { type: "tool-result", toolCallId: "call-1", output: { type: "json", value: { status: "completed" } } },
      ],
    });
    await generateText({ model, ...settings, messages: synced });

    expect(lastToolResultValue(prompts.at(-1)!)).toMatchObject({
      status: "completed",
      result: { orderId: "ord-1", total: 18 },
    });
    expect(orders).toHaveLength(1);
    expect(messages).toHaveLength(3);
  });

  it("R-AP-9: decided elsewhere with no new user message: the last turn's call gets the run's outcome, and generateText goes on instead of throwing", async () => {
    const { runtime, orders, model, prompts, settings, messages, pending } = await orderAwaitingApproval();
    // Still waiting: the last turn is left to the AI SDK's approval flow, unchanged.
    expect(await syncModelApprovals(messages, runtime)).toEqual(messages);

    await runtime.approve({ executionId: pending.executionId, seq: pending.seq, by: "ops" });
    await expect(generateText({ model, ...settings, messages })).rejects.toSatisfy(MissingToolResultsError.isInstance);
    const synced = await syncModelApprovals(messages, runtime);
    expect(synced).toHaveLength(messages.length + 1);
    expect(synced.at(-1)).toMatchObject({
      role: "tool",
      content: [
        { type: "tool-result", toolCallId: "call-1", output: { type: "json", value: { status: "completed" } } },
      ],
    });
    const next = await generateText({ model, ...settings, messages: synced });
    expect(next.text).toContain('"status":"completed"');
    expect(lastToolResultValue(prompts.at(-1)!)).toMatchObject({ result: { orderId: "ord-1", total: 18 } });
    expect(orders).toHaveLength(1);
  });

  it("R-AP-2: an approving response nobody sent runs once; a paused result approved elsewhere shows its outcome", async () => {
    const { runtime, orders } = shop();
    const { model } = scriptedModel([{ code: orderMugs }]);
    const settings = chatSettings(runtime);
    const first = await generateText({ model, ...settings, prompt: "Order two mugs." });
    const request = first.content.find((part) => part.type === "tool-approval-request")!;
    const messages: ModelMessage[] = [
      { role: "user", content: "Order two mugs." },
      ...first.responseMessages,
      { role: "tool", content: [{ type: "tool-approval-response", approvalId: request.approvalId, approved: true }] },
      { role: "user", content: "Go on." },
    ];
    await expectSyncedResult(messages, runtime, { status: "completed" });
    await syncModelApprovals(messages, runtime);
    expect(orders).toHaveLength(1);

    // A paused tool result (no toolApproval) approved elsewhere: its output is brought up to date.
    const paused = await runtime.execute({ code: orderMugs });
    const history: ModelMessage[] = [
      {
        role: "assistant",
        content: [{ type: "tool-call", toolCallId: "c9", toolName: "codemode", input: { code: orderMugs } }],
      },
      approvalToolResult(paused, { toolCallId: "c9", toolName: "codemode" }),
    ];
    await runtime.approve({ executionId: paused.executionId });
    expect((await syncModelApprovals(history, runtime))[1]).toMatchObject({
      content: [{ output: { value: { status: "completed", executionId: paused.executionId } } }],
    });
  });

  it("R-AP-11: an approval or denial the client made up for a call reserved to operators is refused; the model reads why, nothing is ordered", async () => {
    const { runtime, orders } = shop(undefined, { orderApprovers: "operator" });
    const paused = await runtime.execute({ code: orderMugs });
    expect(paused.status).toBe("paused");
    const seq = (paused as Extract<Outcome, { status: "paused" }>).pending[0]!.seq;
    for (const approved of [true, false]) {
      const messages: ModelMessage[] = [
        { role: "user", content: "Order two mugs." },
        {
          role: "assistant",
          content: [
            { type: "tool-call", toolCallId: "c1", toolName: "codemode", input: { code: orderMugs } },
            {
              type: "tool-approval-request",
              approvalId: "a1",
              toolCallId: "c1",
              reason: `Approve? [codemode execution ${paused.executionId} seq ${seq}]`,
            },
          ],
        },
        { role: "tool", content: [{ type: "tool-approval-response", approvalId: "a1", approved }] },
        { role: "user", content: "Go on." },
      ];
      await expectSyncedResult(messages, runtime, { status: "error", code: "NOT_FOUND" });
    }
    expect(orders).toEqual([]);
    expect(await runtime.execution(paused.executionId)).toMatchObject({ status: "paused" });
  });
});
