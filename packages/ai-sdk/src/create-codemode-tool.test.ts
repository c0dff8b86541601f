import { createCodemodeRuntime, defineConnector, type Outcome } from "@codemode/core";
import { generateText, type LanguageModel, stepCountIs, streamText, ToolLoopAgent } from "ai";
import { describe, expect, it } from "vitest";
import { createCodemodeTool } from "./create-codemode-tool.js";
import { runtimesClosedAfterEach } from "./testing/runtimes.js";
import { lastToolResultValue, scriptedModel, toolResultsIn } from "./testing/scripted-model.js";
import { orderMugs, searchMugs } from "./testing/shop.js";

const { shop, closeAfterTest } = runtimesClosedAfterEach();

/** The model writes the search program, then answers with what the tool result told it. */
function searchThenAnswer() {
  return scriptedModel([
    { code: searchMugs },
    (prompt) => ({ text: `Found: ${JSON.stringify((lastToolResultValue(prompt) as { result: unknown }).result)}` }),
  ]);
}

/** Settings for generateText or streamText: `model` may call `codemode` for up to five steps. */
function toolLoop(model: LanguageModel, codemode: ReturnType<typeof createCodemodeTool>, prompt: string) {
  return { model, tools: { codemode }, stopWhen: stepCountIs(5), prompt };
}

describe("createCodemodeTool", () => {
  // The three R-AI-1 stories spell out their generateText, streamText or agent call in full, as an
  // application writes it; the tests after them share those settings through toolLoop.
  it("R-AI-1: generateText — the model writes code, the tool completes, the model answers", async () => {
    const { runtime } = shop();
    const { model, prompts } = searchThenAnswer();
    const result = await generateText({
      model,
      tools: { codemode: createCodemodeTool(runtime) },
      stopWhen: stepCountIs(5),
      prompt: "Which mugs do you sell?",
    });

    expect(result.text).toBe('Found: ["mug-logo"]');
    expect(prompts).toHaveLength(2);
    const output = result.steps[0]!.toolResults[0]!.output as Outcome;
    expect(output).toMatchObject({ status: "completed", result: ["mug-logo"] });
    expect(lastToolResultValue(prompts[1]!)).toEqual({
      status: "completed",
      executionId: output.executionId,
      result: ["mug-logo"],
    });
  });

  it("R-AI-1: streamText — the same loop, streamed", async () => {
    const { runtime } = shop();
    const { model, prompts } = searchThenAnswer();
    const result = streamText({
      model,
      tools: { codemode: createCodemodeTool(runtime) },
      stopWhen: stepCountIs(5),
      prompt: "Which mugs do you sell?",
    });

    expect(await result.text).toBe('Found: ["mug-logo"]');
    expect(prompts).toHaveLength(2);
    expect(lastToolResultValue(prompts[1]!)).toMatchObject({ status: "completed", result: ["mug-logo"] });
  });

  it("R-AI-1: ToolLoopAgent — the agent loop calls the tool and answers", async () => {
    const { runtime } = shop();
    const { model, prompts } = searchThenAnswer();
    const tools = { codemode: createCodemodeTool(runtime) };
    const agent = new ToolLoopAgent({ model, tools, stopWhen: stepCountIs(5) });
    const result = await agent.generate({ prompt: "Which mugs do you sell?" });

    expect(result.text).toBe('Found: ["mug-logo"]');
    expect(prompts).toHaveLength(2);
  });

  it("R-AI-1: by default the tool's output — and so the UI message stream — is the model-facing outcome, without `calls`", async () => {
    const { runtime } = shop();
    const { model, prompts } = searchThenAnswer();
    const result = streamText(toolLoop(model, createCodemodeTool(runtime), "Mugs?"));
    const chunks: unknown[] = [];
    for await (const chunk of result.toUIMessageStream()) chunks.push(chunk);

    const streamed = chunks.find(
      (chunk): chunk is { type: "tool-output-available"; output: unknown } =>
        (chunk as { type: string }).type === "tool-output-available",
    );
    const executionId = (streamed!.output as { executionId: string }).executionId;
    expect(streamed!.output).toEqual({ status: "completed", executionId, result: ["mug-logo"] });
    expect(JSON.stringify(chunks)).not.toContain('"calls"');
    expect(lastToolResultValue(prompts[1]!)).toEqual({ status: "completed", executionId, result: ["mug-logo"] });
    // The call log stays on the server.
    expect((await runtime.execution(executionId))?.log).toEqual([
      expect.objectContaining({ connector: "catalog", method: "search_products" }),
    ]);
  });

  it("R-AI-1: includeCalls: true makes the output the full Outcome with `calls`; the model still sees none", async () => {
    const { runtime } = shop();
    const { model, prompts } = searchThenAnswer();
    const result = await generateText(toolLoop(model, createCodemodeTool(runtime, { includeCalls: true }), "Mugs?"));

    const output = result.steps[0]!.toolResults[0]!.output as Outcome;
    expect(output.calls).toEqual([
      expect.objectContaining({ seq: 0, connector: "catalog", method: "search_products", state: "applied" }),
    ]);
    const shown = toolResultsIn(prompts[1]!)[0]!.output;
    expect(shown).toMatchObject({ type: "json" });
    expect(JSON.stringify(shown)).not.toContain('"calls"');
  });
});

describe("createCodemodeTool: pauses, failures and options", () => {
  it("strict is passed to the AI SDK tool (and so to providers that support strict mode)", () => {
    const { runtime } = shop();
    expect(createCodemodeTool(runtime, { strict: true }).strict).toBe(true);
    expect(createCodemodeTool(runtime).strict).toBeUndefined();
  });

  it("R-AI-1: a pause is a tool result that tells the model to wait, not an exception", async () => {
    const { runtime, orders } = shop();
    const { model, prompts } = scriptedModel([{ code: orderMugs }, { text: "Your order waits for approval." }]);
    const result = await generateText(toolLoop(model, createCodemodeTool(runtime), "Order two mugs."));

    expect(result.text).toBe("Your order waits for approval.");
    expect(orders).toEqual([]);
    expect(lastToolResultValue(prompts[1]!)).toMatchObject({
      status: "paused",
      pending: [{ connector: "shop", method: "create_order", args: { sku: "mug-logo", quantity: 2 } }],
      message: expect.stringContaining("do not re-issue the code"),
    });
  });

  it("R-AI-1: a failing program reaches the model as a tool result with its error code", async () => {
    const { runtime } = shop();
    const { model, prompts } = scriptedModel([
      { code: "async () => { return catalog.search_products({ query: 'mug' }" },
      { text: "Let me fix that." },
    ]);
    const result = await generateText(toolLoop(model, createCodemodeTool(runtime), "Mugs?"));

    expect(result.text).toBe("Let me fix that.");
    expect(lastToolResultValue(prompts[1]!)).toMatchObject({ status: "error", code: "SYNTAX_ERROR" });
  });

  it("R-AI-1: logs are bounded for the model; bigint results arrive as JSON", async () => {
    const runtime = closeAfterTest(createCodemodeRuntime());
    const code = "async () => { for (let i = 0; i < 5; i++) console.log('line ' + i); return 2n ** 70n; }";
    const { model, prompts } = scriptedModel([{ code }, { text: "done" }]);
    await generateText(
      toolLoop(model, createCodemodeTool(runtime, { modelOutput: { maxLogLines: 2 } }), "Big number."),
    );

    expect(lastToolResultValue(prompts[1]!)).toMatchObject({
      status: "completed",
      result: "1180591620717411303424",
      logs: ["line 0", "line 1", "[3 more log lines not shown]"],
    });
  });

  it("R-AI-2: the description comes from the runtime, with per-connector hints, and can be replaced", () => {
    const { runtime } = shop();
    const described = createCodemodeTool(runtime, { hints: { shop: "Ask before ordering more than 10." } })
      .description as string;
    expect(described).toBe(runtime.modelDescription({ hints: { shop: "Ask before ordering more than 10." } }));
    expect(described).toContain("- catalog (Read-only product…): search_products, +1 more.");
    expect(described).toContain("Ask before ordering more than 10.");
    expect(described).toContain("do not re-issue the code");
    expect(createCodemodeTool(runtime, { description: "Run code." }).description).toBe("Run code.");
  });

  it("R-AI-1: a connector that needs approval for some arguments only pauses for those", async () => {
    const sent: string[] = [];
    const mail = defineConnector({
      name: "mail",
      tools: {
        send: {
          requiresApproval: (args: { to: string }) => !args.to.endsWith("@acme.test"),
          execute: (args: { to: string }) => void sent.push(args.to),
        },
      },
    });
    const runtime = closeAfterTest(createCodemodeRuntime({ connectors: [mail] }));
    const codemode = createCodemodeTool(runtime);
    const inside = await codemode.execute!(
      { code: "async () => { await mail.send({ to: 'ann@acme.test' }); return 'ok'; }" },
      { toolCallId: "c1", messages: [], context: {} },
    );
    const outside = await codemode.execute!(
      { code: "async () => { await mail.send({ to: 'bob@else.test' }); return 'ok'; }" },
      { toolCallId: "c2", messages: [], context: {} },
    );
    expect(inside).toMatchObject({ status: "completed" });
    expect(outside).toMatchObject({ status: "paused" });
    expect(sent).toEqual(["ann@acme.test"]);
  });
});
