import { defineConnector, type Outcome } from "@codemode/core";
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { MemorySaver } from "@langchain/langgraph";
import { createAgent, fakeModel } from "langchain";
import { describe, expect, it } from "vitest";
import { createCodemodeTool } from "./create-codemode-tool.js";
import { runtimesClosedAfterEach } from "./testing/runtimes.js";
import { approvalToolMessage, continueAfterApproval, pausedCodemodeCalls } from "./tool-messages.js";

/** The runtime as a LangChain tool in a createAgent conversation (R-LC-1, R-LC-2). */

const runtimeWith = runtimesClosedAfterEach();

// A shop of its own, not ai-sdk's testing/shop.ts: the adapter packages share no test code.
function shopRuntime() {
  const orders: Array<{ sku: string; quantity: number }> = [];
  const catalog = defineConnector({
    name: "catalog",
    instructions: "Read-only product catalog.",
    tools: {
      search_products: {
        description: "Products whose name contains the query.",
        inputSchema: { type: "object", properties: { query: { type: "string" } }, required: ["query"] },
        execute: (args: { query: string }) =>
          [{ sku: "mug-logo", name: "Logo mug", price: 9 }].filter((product) =>
            product.name.toLowerCase().includes(args.query),
          ),
      },
    },
  });
  const shop = defineConnector({
    name: "shop",
    tools: {
      create_order: {
        requiresApproval: true,
        execute: (args: { sku: string; quantity: number }) => {
          orders.push(args);
          return { orderId: `ord-${orders.length}`, status: "placed" };
        },
      },
    },
  });
  const runtime = runtimeWith(catalog, shop);
  return { runtime, orders };
}

const searchProgram = `async () => {
  const found = await catalog.search_products({ query: "mug" });
  console.log("found", found.length);
  return found.map((product) => product.sku);
}`;

const orderProgram = `async () => {
  const [mug] = await catalog.search_products({ query: "mug" });
  const order = await shop.create_order({ sku: mug.sku, quantity: 2 });
  return { ordered: order.orderId, total: mug.price * 2 };
}`;

/** A fake model that writes `code`, then answers with the text of the last tool result it saw. */
function scriptedModel(code: string) {
  return fakeModel()
    .respondWithTools([{ name: "codemode", args: { code }, id: "call_1" }])
    .respond((messages) => new AIMessage(`Seen: ${String(lastToolMessage(messages)?.content)}`));
}

function lastToolMessage(messages: readonly BaseMessage[]): ToolMessage | undefined {
  return messages.findLast((message): message is ToolMessage => ToolMessage.isInstance(message));
}

describe("createCodemodeTool (R-LC-1)", () => {
  it("is a structured tool named codemode taking { code }, described from the runtime", () => {
    const { runtime } = shopRuntime();
    const codemode = createCodemodeTool(runtime);
    expect(codemode.name).toBe("codemode");
    expect(codemode.description).toBe(runtime.modelDescription());
    expect(codemode.description).toContain("- catalog (Read-only product…): ");
    expect(codemode.schema).toMatchObject({ type: "object", required: ["code"] });
    expect(createCodemodeTool(runtime, { name: "run_code", description: "Runs code." })).toMatchObject({
      name: "run_code",
      description: "Runs code.",
    });
    expect(createCodemodeTool(runtime, { hints: { shop: "Orders cost money." } }).description).toContain(
      "Orders cost money.",
    );
  });

  it("R-LC-1: a completed run is a tool result; the model sees the outcome without calls, the artifact keeps them", async () => {
    const { runtime } = shopRuntime();
    const model = scriptedModel(searchProgram);
    const agent = createAgent({ model, tools: [createCodemodeTool(runtime)] });

    const result = await agent.invoke({ messages: [new HumanMessage("Which mugs do you sell?")] });

    const toolMessage = lastToolMessage(result.messages)!;
    expect(toolMessage.tool_call_id).toBe("call_1");
    const content = JSON.parse(String(toolMessage.content));
    expect(content).toMatchObject({ status: "completed", result: ["mug-logo"], logs: ["found 1"] });
    expect(content).not.toHaveProperty("calls");
    const artifact = toolMessage.artifact as Outcome;
    expect(artifact).toMatchObject({ status: "completed", executionId: content.executionId });
    expect(artifact.calls?.map((call) => `${call.connector}.${call.method}`)).toEqual(["catalog.search_products"]);
    // The model's second turn received the result.
    expect(model.calls[1]!.messages.map((message) => message.content)).toContain(toolMessage.content);
    expect(result.messages.at(-1)!.content).toContain('"result":["mug-logo"]');
  });

  it("R-LC-1: a failure is a tool result the model reads, never a throw", async () => {
    const { runtime } = shopRuntime();
    const model = scriptedModel(
      `async () => { const found = await catalog.search_products({ query: 42 }); return found; }`,
    );
    const agent = createAgent({ model, tools: [createCodemodeTool(runtime)] });

    const result = await agent.invoke({ messages: [new HumanMessage("Search for 42")] });

    const content = JSON.parse(String(lastToolMessage(result.messages)!.content));
    expect(content).toMatchObject({ status: "error", code: "PROGRAM_ERROR" });
    expect(content.error).toContain("catalog.search_products");
    expect(String(result.messages.at(-1)!.content)).toContain('"status":"error"');

    const syntax = await createCodemodeTool(runtime).invoke({
      type: "tool_call",
      id: "call_9",
      name: "codemode",
      args: { code: "async () => {" },
    });
    expect(syntax).toBeInstanceOf(ToolMessage);
    expect((syntax.artifact as Outcome).status).toBe("error");
    expect(JSON.parse(String(syntax.content))).toMatchObject({ status: "error", code: "SYNTAX_ERROR" });
  });

  it("R-LC-1: a pause is a tool result that tells the model to wait for the human", async () => {
    const { runtime, orders } = shopRuntime();
    const model = scriptedModel(orderProgram);
    const agent = createAgent({ model, tools: [createCodemodeTool(runtime)] });

    const result = await agent.invoke({ messages: [new HumanMessage("Order two mugs")] });

    const content = JSON.parse(String(lastToolMessage(result.messages)!.content));
    expect(content).toMatchObject({
      status: "paused",
      pending: [{ connector: "shop", method: "create_order", args: { sku: "mug-logo", quantity: 2 } }],
    });
    expect(content.message).toContain("do not re-issue the code");
    expect(orders).toEqual([]);
  });
});

describe("continuing after approval (R-LC-2)", () => {
  it("R-LC-2: pause → approve → the ToolMessage replaces the pause in a checkpointed thread and the model sees the real result", async () => {
    const { runtime, orders } = shopRuntime();
    const model = scriptedModel(orderProgram).respond(
      (messages) => new AIMessage(`Now: ${String(lastToolMessage(messages)?.content)}`),
    );
    const agent = createAgent({ model, tools: [createCodemodeTool(runtime)], checkpointer: new MemorySaver() });
    const config = { configurable: { thread_id: "order-thread" } };

    const first = await agent.invoke({ messages: [new HumanMessage("Order two mugs")] }, config);
    const [paused] = pausedCodemodeCalls(first.messages);
    expect(paused).toMatchObject({ pending: [{ connector: "shop", method: "create_order" }] });

    const outcome = await runtime.approve({
      executionId: paused!.executionId,
      seq: paused!.pending[0]!.seq,
      by: "test",
    });
    expect(outcome).toMatchObject({ status: "completed", result: { ordered: "ord-1", total: 18 } });
    const second = await agent.invoke({ messages: [approvalToolMessage(outcome, paused!.message)] }, config);

    // The paused result was replaced in place: one answer to call_1, and it is the real one.
    const answers = second.messages.filter((message): message is ToolMessage => ToolMessage.isInstance(message));
    expect(answers).toHaveLength(1);
    expect(answers[0]).toMatchObject({ tool_call_id: "call_1", id: paused!.message.id });
    expect(JSON.parse(String(answers[0]!.content))).toMatchObject({
      status: "completed",
      result: { ordered: "ord-1", total: 18 },
    });
    expect((answers[0]!.artifact as Outcome).calls).toHaveLength(2);
    // The model's third turn received the real result where the pause was.
    const seen = model.calls[2]!.messages.filter((message) => ToolMessage.isInstance(message)).map(
      (message) => JSON.parse(String(message.content)).status,
    );
    expect(seen).toEqual(["completed"]);
    expect(second.messages.at(-1)!.content).toContain('"ordered":"ord-1"');
    expect(orders).toEqual([{ sku: "mug-logo", quantity: 2 }]);
    expect(pausedCodemodeCalls(second.messages)).toEqual([]);
  });

  it("R-LC-2: without a checkpointer, the application swaps the message in its own history", async () => {
    const { runtime } = shopRuntime();
    const model = scriptedModel(orderProgram).respond(
      (messages) => new AIMessage(`Now: ${String(lastToolMessage(messages)?.content)}`),
    );
    const agent = createAgent({ model, tools: [createCodemodeTool(runtime)] });

    const first = await agent.invoke({ messages: [new HumanMessage("Order two mugs")] });
    const [paused] = pausedCodemodeCalls(first.messages);
    const outcome = await runtime.approve({ executionId: paused!.executionId });
    const replacement = approvalToolMessage(outcome, { toolCallId: paused!.message.tool_call_id });
    const history = first.messages.map((message) => (message === paused!.message ? replacement : message));

    const second = await agent.invoke({ messages: history });

    expect(replacement).toMatchObject({ tool_call_id: "call_1", name: "codemode" });
    expect(second.messages.at(-1)!.content).toContain('"status":"completed"');
  });

  it("R-LC-2: continueAfterApproval adds the note the AI SDK adapter adds, so the model answers the new turn", async () => {
    const { runtime, orders } = shopRuntime();
    const model = scriptedModel(orderProgram).respond(
      (messages) => new AIMessage(`Now: ${String(messages.at(-1)?.content)}`),
    );
    const agent = createAgent({ model, tools: [createCodemodeTool(runtime)], checkpointer: new MemorySaver() });
    const config = { configurable: { thread_id: "note-thread" } };

    const first = await agent.invoke({ messages: [new HumanMessage("Order two mugs")] }, config);
    const [paused] = pausedCodemodeCalls(first.messages);
    const outcome = await runtime.approve({ executionId: paused!.executionId });
    const [replacement, note] = continueAfterApproval(outcome, paused!.message);
    const second = await agent.invoke({ messages: [replacement, note] }, config);

    expect(note.content).toBe(
      `Code Mode execution ${outcome.executionId} went on after approval; the codemode result above now shows how it ended (completed).`,
    );
    // The model's last prompt ends with the note, after its own "waits for approval" answer.
    expect(model.calls.at(-1)!.messages.at(-1)!.content).toBe(note.content);
    expect(second.messages.filter((message) => ToolMessage.isInstance(message))).toHaveLength(1);
    expect(orders).toHaveLength(1);
  });
});
