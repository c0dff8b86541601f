import type { CodemodeRuntime } from "@codemode/core";
import { generateText, type ModelMessage, stepCountIs, streamText } from "ai";
import { describe, expect, it } from "vitest";
import { approvalToolResult, continueAfterApproval } from "./approval-messages.js";
import { codemodeToolApproval, rejectDeniedExecutions } from "./codemode-tool-approval.js";
import { connectorFromAiSdkTools } from "./connector-from-ai-sdk-tools.js";
import { createCodemodeTool } from "./create-codemode-tool.js";
import { syncApprovals } from "./sync-approvals.js";
import { syncModelApprovals } from "./sync-model-approvals.js";
import { runtimesClosedAfterEach } from "./testing/runtimes.js";
import { scriptedModel } from "./testing/scripted-model.js";
import { orderMugs } from "./testing/shop.js";

/** What plain JavaScript gets wrong fails when the function is called, saying what was expected. */

const { shop } = runtimesClosedAfterEach();

// Plain JavaScript has no types: the table calls the functions as it would.
type Untyped = (...args: unknown[]) => unknown;
const js = (fn: unknown) => fn as Untyped;

const RUNTIME = "a CodemodeRuntime from createCodemodeRuntime";
const outcome = { status: "completed", executionId: "ex-1", result: 1, calls: [] };
const messages: ModelMessage[] = [{ role: "user", content: "Order two mugs." }];

const badCalls: Array<[string, (runtime: CodemodeRuntime) => unknown, string]> = [
  [
    "createCodemodeTool without a runtime",
    () => js(createCodemodeTool)(),
    `createCodemodeTool(runtime, options): runtime must be ${RUNTIME} (with execute, decide, execution, outcome, modelDescription); got undefined.`,
  ],
  [
    "createCodemodeTool with the options where the runtime goes",
    () => js(createCodemodeTool)({ description: "Run code." }),
    `createCodemodeTool(runtime, options): runtime must be ${RUNTIME} (with execute, decide, execution, outcome, modelDescription); got an object { description }.`,
  ],
  [
    "createCodemodeTool with options that are not an object",
    (runtime) => js(createCodemodeTool)(runtime, "codemode"),
    'createCodemodeTool(runtime, options): options must be an object; got the string "codemode".',
  ],
  [
    "createCodemodeTool with hints as one string",
    (runtime) => js(createCodemodeTool)(runtime, { hints: "Repos live under acme/." }),
    `createCodemodeTool(runtime, options): options.hints must be an object of strings by connector name, e.g. { github: 'Repos live under acme/.' }; got the string "Repos live under acme/.".`,
  ],
  [
    "createCodemodeTool with a hint that is not a string",
    (runtime) => js(createCodemodeTool)(runtime, { hints: { shop: 10 } }),
    "createCodemodeTool(runtime, options): options.hints.shop must be a string; got number 10.",
  ],
  [
    "createCodemodeTool with strict as a string",
    (runtime) => js(createCodemodeTool)(runtime, { strict: "true" }),
    'createCodemodeTool(runtime, options): options.strict must be true or false; got the string "true".',
  ],
  [
    "createCodemodeTool with includeCalls as a number",
    (runtime) => js(createCodemodeTool)(runtime, { includeCalls: 1 }),
    "createCodemodeTool(runtime, options): options.includeCalls must be true or false; got number 1.",
  ],
  [
    "createCodemodeTool with a description that is a function",
    (runtime) => js(createCodemodeTool)(runtime, { description: function describe() {} }),
    "createCodemodeTool(runtime, options): options.description must be a string; got the function describe.",
  ],
  [
    "createCodemodeTool with approvedBy as an object",
    (runtime) => js(createCodemodeTool)(runtime, { approvedBy: { name: "ann" } }),
    "createCodemodeTool(runtime, options): options.approvedBy must be a string; got an object { name }.",
  ],
  [
    "createCodemodeTool with a log bound as text",
    (runtime) => js(createCodemodeTool)(runtime, { modelOutput: { maxLogLines: "10" } }),
    'createCodemodeTool(runtime, options): options.modelOutput.maxLogLines must be a number ≥ 0; got the string "10".',
  ],
  [
    "codemodeToolApproval without a runtime",
    () => js(codemodeToolApproval)(undefined),
    `codemodeToolApproval(runtime): runtime must be ${RUNTIME} (with execute); got undefined. Call it with your runtime: \`toolApproval: { codemode: codemodeToolApproval(runtime) }\` (or \`toolApproval: codemodeToolApproval(runtime)\`).`,
  ],
  [
    "codemodeToolApproval called by the AI SDK as a per-tool entry (passed uncalled)",
    () => js(codemodeToolApproval)({ code: orderMugs }, { toolCallId: "call-1", messages }),
    "codemodeToolApproval was given to the AI SDK uncalled, so the AI SDK called it with the tool call (an object { code }) instead of a runtime. Call it with your runtime: `toolApproval: { codemode: codemodeToolApproval(runtime) }` (or `toolApproval: codemodeToolApproval(runtime)`).",
  ],
  [
    "codemodeToolApproval called by the AI SDK as the generic function (passed uncalled)",
    () => js(codemodeToolApproval)({ toolCall: { toolName: "codemode" }, tools: {}, messages }),
    "codemodeToolApproval was given to the AI SDK uncalled, so the AI SDK called it with the tool call (an object { toolCall, tools, messages }) instead of a runtime. Call it with your runtime: `toolApproval: { codemode: codemodeToolApproval(runtime) }` (or `toolApproval: codemodeToolApproval(runtime)`).",
  ],
  [
    "rejectDeniedExecutions with its arguments swapped",
    (runtime) => js(rejectDeniedExecutions)(messages, runtime),
    `rejectDeniedExecutions(runtime, messages, options): runtime must be ${RUNTIME} (with decide, execution, outcome); got an array of 1.`,
  ],
  [
    "rejectDeniedExecutions with by as a number",
    (runtime) => js(rejectDeniedExecutions)(runtime, messages, { by: 42 }),
    "rejectDeniedExecutions(runtime, messages, options): options.by must be a string; got number 42.",
  ],
  [
    "syncApprovals with its arguments swapped",
    (runtime) => js(syncApprovals)(runtime, []),
    "syncApprovals(messages, runtime, options): messages must be an array of UI messages (useChat's messages); got a CodemodeRuntime.",
  ],
  [
    "syncApprovals with keepWaiting as a string",
    (runtime) => js(syncApprovals)([], runtime, { keepWaiting: "yes" }),
    'syncApprovals(messages, runtime, options): options.keepWaiting must be true or false; got the string "yes".',
  ],
  [
    "syncModelApprovals with a store where the runtime goes",
    () => js(syncModelApprovals)([], {}),
    `syncModelApprovals(messages, runtime, options): runtime must be ${RUNTIME} (with decide, execution, outcome); got an empty object.`,
  ],
  [
    "syncModelApprovals with modelOutput as a number",
    (runtime) => js(syncModelApprovals)([], runtime, { modelOutput: 20 }),
    "syncModelApprovals(messages, runtime, options): options.modelOutput must be an object { maxLogLines?, maxLogLineChars? } of numbers; got number 20.",
  ],
  [
    "connectorFromAiSdkTools without a name",
    () => js(connectorFromAiSdkTools)({ findCustomer: {} }),
    "connectorFromAiSdkTools(name, toolSet, options): name must be a string; got an object { findCustomer }.",
  ],
  [
    "connectorFromAiSdkTools with an array of tools",
    () => js(connectorFromAiSdkTools)("billing", [{ execute: () => 1 }]),
    "connectorFromAiSdkTools(name, toolSet, options): toolSet must be an object of AI SDK tools by name, e.g. { findCustomer, sendInvoice }; got an array of 1.",
  ],
  [
    "connectorFromAiSdkTools with context as a string",
    () => js(connectorFromAiSdkTools)("billing", {}, { context: "tenant-1" }),
    'connectorFromAiSdkTools(name, toolSet, options): options.context must be an object; got the string "tenant-1".',
  ],
  [
    "approvalToolResult with a promise of the outcome (no await)",
    () => js(approvalToolResult)(Promise.resolve(outcome), { toolCallId: "call-1", toolName: "codemode" }),
    "approvalToolResult(outcome, call, options): outcome must be an Outcome (what runtime.approve or runtime.execute resolved to); got a promise (await it first).",
  ],
  [
    "approvalToolResult without the tool call's name",
    () => js(approvalToolResult)(outcome, { toolCallId: "call-1" }),
    "approvalToolResult(outcome, call, options): call must be the tool call { toolCallId, toolName } of strings; got an object { toolCallId }.",
  ],
  [
    "continueAfterApproval with its arguments in LangChain's order",
    () => js(continueAfterApproval)(outcome, messages),
    "continueAfterApproval(messages, outcome, options): messages must be an array of model messages; got an object { status, executionId, result, calls }.",
  ],
];

describe("R-AI-1: misuse from plain JavaScript fails when the function is called", () => {
  it.each(badCalls)("%s", async (_story, call, message) => {
    const { runtime } = shop();
    // Async functions reject; the others throw. Both are the call failing, at once.
    await expect(async () => call(runtime)).rejects.toThrow(new TypeError(message));
  });

  it("the options of a correct call pass", async () => {
    const { runtime } = shop();
    expect(() =>
      createCodemodeTool(runtime, {
        description: "Run code.",
        hints: { shop: "Orders cost money." },
        approvedBy: "ann",
        strict: true,
        includeCalls: true,
        modelOutput: { maxLogLines: 5, maxLogLineChars: Number.POSITIVE_INFINITY },
      }),
    ).not.toThrow();
    await expect(syncModelApprovals(messages, runtime, { by: "ann" })).resolves.toEqual(messages);
  });
});

describe("R-AI-1: codemodeToolApproval handed to the AI SDK uncalled", () => {
  const approvals = {
    "the codemode tool's entry": { codemode: codemodeToolApproval },
    "the generic function": codemodeToolApproval,
  };

  for (const [place, toolApproval] of Object.entries(approvals)) {
    it(`as ${place}: generateText fails with how to call it, and nothing is ordered`, async () => {
      const { runtime, orders } = shop();
      const { model } = scriptedModel([{ code: orderMugs }, { text: "Ordered." }]);
      const settings = { tools: { codemode: createCodemodeTool(runtime) }, stopWhen: stepCountIs(3), messages };
      await expect(generateText({ model, ...settings, toolApproval: js(toolApproval) as never })).rejects.toThrow(
        /codemodeToolApproval was given to the AI SDK uncalled.*codemodeToolApproval\(runtime\)/,
      );
      expect(orders).toEqual([]);
      expect((await runtime.executions()).items).toEqual([]);
    });
  }

  it("through streamText: the result's text rejects with the same error", async () => {
    const { runtime, orders } = shop();
    const { model } = scriptedModel([{ code: orderMugs }, { text: "Ordered." }]);
    const result = streamText({
      model,
      tools: { codemode: createCodemodeTool(runtime) },
      toolApproval: { codemode: js(codemodeToolApproval) as never },
      stopWhen: stepCountIs(3),
      messages,
    });
    await expect(result.text).rejects.toThrow(/given to the AI SDK uncalled/);
    expect(orders).toEqual([]);
  });
});
