// LangChain agent: a createAgent agent writes one program against two connectors made from
// ordinary LangChain tools; the order needs approval, so the run pauses and the agent interrupts;
// you approve in the terminal (automatically when not a terminal); the agent resumes with
// Command({ resume }), one decision per pending action (approve, edit or reject, as LangChain 1's
// human-in-the-loop), the program finishes and the model answers from the real result.
//
//   npm run example:langchain                      (a scripted fake model, no keys)
//   OPENAI_API_KEY=… npm run example:langchain     (a real OpenAI model, if @langchain/openai is installed)
import { createCodemodeRuntime } from "@codemode/core";
import { connectorFromLangChainTools, createCodemodeTool } from "@codemode/langchain";
import {
  type CodemodeApprovalDecision,
  type CodemodeApprovalRequest,
  codemodeApprovalMiddleware,
} from "@codemode/langchain/middleware";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { Command, MemorySaver } from "@langchain/langgraph";
import { createAgent, fakeModel } from "langchain";
import { z } from "zod";
import { askYesNo, indent, printTable } from "../shared/terminal.ts";

// --- LangChain tools you already have -----------------------------------------------------------
const products = [
  { sku: "pen-blue", name: "Blue pen", price: 2.5, stock: 120 },
  { sku: "mug-logo", name: "Logo mug", price: 9, stock: 8 },
  { sku: "tee-m", name: "T-shirt (M)", price: 18, stock: 0 },
];
const orders = new Map<string, { orderId: string; sku: string; quantity: number }>();

const searchProducts = tool(
  async ({ query }) =>
    JSON.stringify(products.filter((product) => product.name.toLowerCase().includes(query.toLowerCase()))),
  {
    name: "search_products",
    description: "Products whose name contains the query, with price and stock.",
    schema: z.object({ query: z.string().min(1) }),
  },
);

const createOrder = tool(
  async ({ sku, quantity }, config) => {
    // Code Mode hands every call a key that is the same on every attempt: use it to dedupe.
    const key: string = config.configurable?.codemode?.idempotencyKey ?? sku;
    const orderId = `ord-${key.slice(0, 8)}`;
    orders.set(orderId, { orderId, sku, quantity });
    return JSON.stringify({ orderId, status: "placed" });
  },
  {
    name: "create_order",
    description: "Order a quantity of one product.",
    schema: z.object({ sku: z.string(), quantity: z.number().int().min(1) }),
  },
);

// --- the same tools as Code Mode connectors ------------------------------------------------------
const catalog = connectorFromLangChainTools("catalog", [searchProducts], {
  instructions: "Read-only product catalog.",
});
const shop = connectorFromLangChainTools("shop", [createOrder], {
  instructions: "Places orders. Every order needs a human's approval.",
  requiresApproval: { create_order: true },
});
const runtime = createCodemodeRuntime({ connectors: [catalog, shop], limits: { timeoutMs: 10_000 } });

// --- the agent ------------------------------------------------------------------------------------
const agent = createAgent({
  model: await chooseModel(),
  tools: [createCodemodeTool(runtime)],
  middleware: [codemodeApprovalMiddleware(runtime)],
  checkpointer: new MemorySaver(),
  systemPrompt: "You are a shop assistant. Use the codemode tool to look things up and act.",
});
const config = { configurable: { thread_id: "langchain-example" } };

const question = "Find a mug that is in stock and order two of them. What did it cost?";
console.log(`user: ${question}\n`);
let result = await agent.invoke({ messages: [new HumanMessage(question)] }, config);
showProgram(result.messages);

while (result.__interrupt__?.length) {
  const request = result.__interrupt__[0]!.value as CodemodeApprovalRequest;
  // One decision per action request, in their order; a program may wait on several at once.
  const decisions: CodemodeApprovalDecision[] = [];
  for (const action of request.pending) {
    console.log(
      `  paused: ${action.connector}.${action.method} (execution ${action.executionId.slice(0, 8)}…, call ${action.seq}) needs approval`,
    );
    const approved = await askYesNo(`Approve ${action.connector}.${action.method}(${JSON.stringify(action.args)})?`);
    decisions.push(
      approved
        ? { type: "approve", by: "example user" }
        : // The call rejects inside the program with an ApprovalDenied error (it may catch it).
          { type: "reject", message: "declined in the terminal", by: "example user" },
    );
  }
  console.log("\n→ agent.invoke(new Command({ resume: { decisions } }))");
  result = await agent.invoke(new Command({ resume: { decisions } }), config);
}

const executionId = lastCodemodeExecution(result.messages);
const record = executionId ? await runtime.execution(executionId) : null;
for (const line of record?.logs ?? []) console.log(`  console: ${line}`);

const answer = result.messages.at(-1);
console.log(`\nassistant: ${typeof answer?.content === "string" ? answer.content : JSON.stringify(answer?.content)}`);

if (record) {
  console.log(`\nThe durable call log of execution ${record.id} (status: ${record.status}):\n`);
  printTable(record.log);
}
await runtime.close();

// --- helpers ----------------------------------------------------------------------------------------
/** A real OpenAI model when a key is set and @langchain/openai is installed; else a scripted fake. */
async function chooseModel(): Promise<BaseChatModel> {
  if (process.env.OPENAI_API_KEY) {
    try {
      const { ChatOpenAI } = await import("@langchain/openai");
      const model = process.env.OPENAI_MODEL ?? "gpt-4.1-mini";
      console.log(`(model: OpenAI ${model})\n`);
      return new ChatOpenAI({ model });
    } catch {
      console.log("(OPENAI_API_KEY is set but @langchain/openai is not installed: using the scripted model)\n");
    }
  } else {
    console.log("(model: a scripted fake; set OPENAI_API_KEY for a real one)\n");
  }
  const program = `async () => {
  const found = await catalog.search_products({ query: "mug" });
  const inStock = found.filter((product) => product.stock > 0);
  if (inStock.length === 0) return { ordered: null, reason: "nothing in stock" };
  const choice = inStock[0];
  console.log("ordering", choice.name, "at", choice.price);
  const order = await shop.create_order({ sku: choice.sku, quantity: 2 });
  return { ordered: order.orderId, name: choice.name, total: choice.price * 2 };
}`;
  return fakeModel()
    .respondWithTools([{ name: "codemode", args: { code: program }, id: "call_order_mugs" }])
    .respond((messages) => new AIMessage(summarise(messages)));
}

/** What the scripted model says once it has read the tool result. */
function summarise(messages: BaseMessage[]): string {
  const last = messages.findLast((message) => ToolMessage.isInstance(message));
  const outcome = JSON.parse(String(last?.content ?? "{}"));
  if (outcome.status === "completed" && outcome.result?.ordered)
    return `Ordered 2 × ${outcome.result.name} (order ${outcome.result.ordered}) for ${outcome.result.total}.`;
  // A denial the program did not catch ends the run: the error says who denied what, and why.
  if (outcome.status === "error") return `The order was not placed: ${outcome.error}.`;
  return `Something went wrong: ${JSON.stringify(outcome)}`;
}

function showProgram(messages: BaseMessage[]): void {
  for (const message of messages) {
    if (!AIMessage.isInstance(message)) continue;
    for (const call of message.tool_calls ?? []) {
      if (call.name !== "codemode") continue;
      console.log("The model's program:\n");
      console.log(indent(String(call.args.code)));
      console.log("");
    }
  }
}

function lastCodemodeExecution(messages: BaseMessage[]): string | undefined {
  const last = messages.findLast((message) => ToolMessage.isInstance(message) && message.name === "codemode");
  return last ? (last as ToolMessage).artifact?.executionId : undefined;
}
