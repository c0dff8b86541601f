import type { CodemodeRuntime } from "@codemode/core";
import { HumanMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { connectorFromLangChainTools } from "./connector-from-langchain-tools.js";
import { createCodemodeTool } from "./create-codemode-tool.js";
import { codemodeApprovalMiddleware, resumeCodemodeApproval } from "./middleware.js";
import { runtimesClosedAfterEach } from "./testing/runtimes.js";
import {
  approvalToolMessage,
  codemodeToolContent,
  continueAfterApproval,
  pausedCodemodeCalls,
} from "./tool-messages.js";

/** What plain JavaScript gets wrong fails when the function is called, saying what was expected. */

const runtimeWith = runtimesClosedAfterEach();

// Plain JavaScript has no types: the table calls the functions as it would.
type Untyped = (...args: unknown[]) => unknown;
const js = (fn: unknown) => fn as Untyped;

const RUNTIME = "a CodemodeRuntime from createCodemodeRuntime";
const getForecast = tool(async ({ city }) => `sunny in ${city}`, {
  name: "get_forecast",
  description: "The weather forecast of a city.",
  schema: z.object({ city: z.string() }),
});
const outcome = { status: "completed", executionId: "ex-1", result: 1, calls: [] };
const paused = new ToolMessage({ content: "{}", tool_call_id: "call-1", name: "codemode" });
const agent = { getState: async () => ({}), invoke: async () => ({}) };
const thread = { configurable: { thread_id: "t-1" } };
const approve = { decisions: [{ type: "approve" }] };

const badCalls: Array<[string, (runtime: CodemodeRuntime) => unknown, string]> = [
  [
    "createCodemodeTool without a runtime",
    () => js(createCodemodeTool)(),
    `createCodemodeTool(runtime, options): runtime must be ${RUNTIME} (with execute, modelDescription); got undefined.`,
  ],
  [
    "createCodemodeTool with a name that is not a string",
    (runtime) => js(createCodemodeTool)(runtime, { name: 5 }),
    "createCodemodeTool(runtime, options): options.name must be a string; got number 5.",
  ],
  [
    "createCodemodeTool with hints as an array",
    (runtime) => js(createCodemodeTool)(runtime, { hints: ["Ask first."] }),
    "createCodemodeTool(runtime, options): options.hints must be an object of strings by connector name, e.g. { github: 'Repos live under acme/.' }; got an array of 1.",
  ],
  [
    "createCodemodeTool with a negative log bound",
    (runtime) => js(createCodemodeTool)(runtime, { modelOutput: { maxLogLineChars: -1 } }),
    "createCodemodeTool(runtime, options): options.modelOutput.maxLogLineChars must be a number ≥ 0; got number -1.",
  ],
  [
    "connectorFromLangChainTools without a name",
    () => js(connectorFromLangChainTools)([getForecast]),
    "connectorFromLangChainTools(name, tools, options): name must be a string; got an array of 1.",
  ],
  [
    "connectorFromLangChainTools with the tools as an object (an AI SDK tool set)",
    () => js(connectorFromLangChainTools)("weather", { getForecast }),
    "connectorFromLangChainTools(name, tools, options): tools must be an array of LangChain tools, e.g. [getForecast, sendAlert]; got an object { getForecast }.",
  ],
  [
    "connectorFromLangChainTools with a hole in the tools",
    () => js(connectorFromLangChainTools)("weather", [getForecast, undefined]),
    "connectorFromLangChainTools(name, tools, options): tools[1] must be a LangChain tool (with a name and invoke, as tool() makes); got undefined.",
  ],
  [
    "connectorFromLangChainTools with requiresApproval as a list",
    () => js(connectorFromLangChainTools)("weather", [getForecast], { requiresApproval: ["get_forecast"] }),
    "connectorFromLangChainTools(name, tools, options): options.requiresApproval must be an object of true, false or functions by tool name, e.g. { send_alert: true }; got an array of 1.",
  ],
  [
    "connectorFromLangChainTools with an approval rule as a string",
    () => js(connectorFromLangChainTools)("weather", [getForecast], { requiresApproval: { get_forecast: "yes" } }),
    'connectorFromLangChainTools(name, tools, options): options.requiresApproval.get_forecast must be true, false or a function of the arguments; got the string "yes".',
  ],
  [
    "connectorFromLangChainTools with parseJsonResults as a string",
    () => js(connectorFromLangChainTools)("weather", [getForecast], { parseJsonResults: "false" }),
    'connectorFromLangChainTools(name, tools, options): options.parseJsonResults must be true or false; got the string "false".',
  ],
  [
    "codemodeApprovalMiddleware without a runtime",
    () => js(codemodeApprovalMiddleware)(),
    `codemodeApprovalMiddleware(runtime, options): runtime must be ${RUNTIME} (with decide, outcome, execution); got undefined.`,
  ],
  [
    "codemodeApprovalMiddleware with describe as a string",
    (runtime) => js(codemodeApprovalMiddleware)(runtime, { describe: "Approve the order?" }),
    'codemodeApprovalMiddleware(runtime, options): options.describe must be a function; got the string "Approve the order?".',
  ],
  [
    "codemodeApprovalMiddleware with toolName as an object",
    (runtime) => js(codemodeApprovalMiddleware)(runtime, { toolName: { name: "codemode" } }),
    "codemodeApprovalMiddleware(runtime, options): options.toolName must be a string; got an object { name }.",
  ],
  [
    "resumeCodemodeApproval with the runtime as the agent",
    (runtime) => js(resumeCodemodeApproval)(runtime, approve, thread),
    "resumeCodemodeApproval(agent, response, config): agent must be an agent with getState and invoke (createAgent's, or a compiled graph); got a CodemodeRuntime.",
  ],
  [
    "resumeCodemodeApproval with a bare decision",
    () => js(resumeCodemodeApproval)(agent, "approve", thread),
    'resumeCodemodeApproval(agent, response, config): response must be the response { decisions: [{ type: "approve" | "edit" | "reject" }] }; got the string "approve".',
  ],
  [
    "resumeCodemodeApproval with the thread id as the config",
    () => js(resumeCodemodeApproval)(agent, approve, "t-1"),
    'resumeCodemodeApproval(agent, response, config): config must be an object, e.g. { configurable: { thread_id } }; got the string "t-1".',
  ],
  [
    "approvalToolMessage with a promise of the outcome (no await)",
    () => js(approvalToolMessage)(Promise.resolve(outcome), paused),
    "approvalToolMessage(outcome, replaces, options): outcome must be an Outcome (what runtime.approve or runtime.execute resolved to); got a promise (await it first).",
  ],
  [
    "approvalToolMessage with the tool call id alone",
    () => js(approvalToolMessage)(outcome, "call-1"),
    'approvalToolMessage(outcome, replaces, options): replaces must be the paused ToolMessage, or its ids { toolCallId, id?, name? }; got the string "call-1".',
  ],
  [
    "continueAfterApproval with its arguments in the AI SDK's order",
    () => js(continueAfterApproval)([new HumanMessage("Order mugs.")], outcome),
    "continueAfterApproval(outcome, replaces, options): outcome must be an Outcome (what runtime.approve or runtime.execute resolved to); got an array of 1.",
  ],
  [
    "continueAfterApproval with modelOutput as a number",
    () => js(continueAfterApproval)(outcome, paused, { modelOutput: 3 }),
    "continueAfterApproval(outcome, replaces, options): options.modelOutput must be an object { maxLogLines?, maxLogLineChars? } of numbers; got number 3.",
  ],
  [
    "pausedCodemodeCalls with the agent's state instead of its messages",
    () => js(pausedCodemodeCalls)({ messages: [] }),
    "pausedCodemodeCalls(messages, options): messages must be an array of LangChain messages; got an object { messages }.",
  ],
  [
    "pausedCodemodeCalls with toolName as a number",
    () => js(pausedCodemodeCalls)([], { toolName: 3 }),
    "pausedCodemodeCalls(messages, options): options.toolName must be a string; got number 3.",
  ],
  [
    "codemodeToolContent with the log bound alone",
    () => js(codemodeToolContent)(outcome, 50),
    "codemodeToolContent(outcome, options): options must be an object { maxLogLines?, maxLogLineChars? } of numbers; got number 50.",
  ],
];

describe("R-LC-1: misuse from plain JavaScript fails when the function is called", () => {
  it.each(badCalls)("%s", async (_story, call, message) => {
    const runtime = runtimeWith();
    // Async functions reject; the others throw. Both are the call failing, at once.
    await expect(async () => call(runtime)).rejects.toThrow(new TypeError(message));
  });

  it("the options of a correct call pass", () => {
    const runtime = runtimeWith();
    expect(() =>
      createCodemodeTool(runtime, {
        name: "run_code",
        description: "Runs code.",
        hints: { weather: "Cities in English." },
        modelOutput: { maxLogLines: 5 },
      }),
    ).not.toThrow();
    expect(() =>
      connectorFromLangChainTools("weather", [getForecast], {
        instructions: "Weather data.",
        requiresApproval: { get_forecast: ({ city }) => city === "Paris" },
        parseJsonResults: false,
      }),
    ).not.toThrow();
    expect(() => codemodeApprovalMiddleware(runtime, { toolName: "codemode", describe: () => "ok" })).not.toThrow();
    expect(continueAfterApproval(outcome as never, { toolCallId: "call-1" })).toHaveLength(2);
  });
});
