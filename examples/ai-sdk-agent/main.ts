// A command-line agent over the Vercel AI SDK: the model writes one program against two
// connectors made from ordinary AI SDK tools; the order it places pauses the run, the pause
// arrives as the AI SDK's own tool-approval-request, you approve in the terminal, and the model
// answers with the real result. With OPENAI_API_KEY set it talks to OpenAI (OPENAI_MODEL, default
// gpt-5-mini); without it a scripted mock model writes the code.
//
//   npm run example:ai-sdk
//   npm run build && node examples/ai-sdk-agent/main.ts "Order three blue pens"
import { openai } from "@ai-sdk/openai";
import {
  approvalReasonText,
  codemodeToolApproval,
  connectorFromAiSdkTools,
  createCodemodeTool,
  syncModelApprovals,
} from "@codemode/ai-sdk";
import { createCodemodeRuntime, type Decision, type Outcome } from "@codemode/core";
import { describePendingAction } from "@codemode/core/adapters";
import { generateText, type LanguageModel, type ModelMessage, stepCountIs, type ToolApprovalResponse, tool } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { z } from "zod";
import { askYesNo, indent } from "../shared/terminal.ts";

// --- tools an AI SDK app already has, turned into connectors --------------------------------------
const products = [
  { sku: "pen-blue", name: "Blue pen", price: 2.5, stock: 120 },
  { sku: "mug-logo", name: "Logo mug", price: 9, stock: 8 },
  { sku: "tee-m", name: "T-shirt (M)", price: 18, stock: 0 },
];
const catalog = connectorFromAiSdkTools("catalog", {
  search_products: tool({
    description: "Products whose name contains the query, with price and stock.",
    inputSchema: z.object({ query: z.string() }),
    execute: async ({ query }) =>
      products.filter((product) => product.name.toLowerCase().includes(query.toLowerCase())),
  }),
});
const shop = connectorFromAiSdkTools(
  "shop",
  {
    create_order: tool({
      description: "Order a quantity of one product.",
      inputSchema: z.object({ sku: z.string(), quantity: z.number().int().min(1) }),
      needsApproval: true,
      // toolCallId is Code Mode's idempotency key: the same on every attempt of this call.
      execute: async ({ sku, quantity }, { toolCallId }) => ({
        orderId: `ord-${toolCallId.slice(0, 8)}`,
        sku,
        quantity,
        status: "placed",
      }),
    }),
  },
  { instructions: "Places orders. Every order needs a human's approval." },
);

const runtime = createCodemodeRuntime({ connectors: [catalog, shop], limits: { timeoutMs: 10_000 } });
const modelId = process.env.OPENAI_MODEL ?? "gpt-5-mini";
const model: LanguageModel = process.env.OPENAI_API_KEY ? openai(modelId) : scriptedModel();
let outcomes: Outcome[] = []; // what the codemode tool returned in the current turn
const settings = {
  model,
  instructions: "You help customers of a small shop. Use the codemode tool to look things up and act.",
  tools: { codemode: createCodemodeTool(runtime, { approvedBy: "terminal user" }) },
  // Code Mode pauses become the AI SDK's own approval requests.
  toolApproval: { codemode: codemodeToolApproval(runtime) },
  stopWhen: stepCountIs(8),
  // Every outcome, also the one of a run resumed by an approval (that result is no step's).
  onToolExecutionEnd: ({ toolOutput }: { toolOutput: { type: string; output?: unknown } }) => {
    if (toolOutput.type === "tool-result") outcomes.push(report(toolOutput.output as Outcome));
  },
};

const task = process.argv.slice(2).join(" ") || "Order two logo mugs if they are in stock, and tell me the total.";
console.log(
  `model: ${process.env.OPENAI_API_KEY ? `OpenAI ${modelId}` : "a scripted mock (set OPENAI_API_KEY to use OpenAI)"}`,
);
console.log(`you: ${task}`);
let messages: ModelMessage[] = [{ role: "user", content: task }];

for (let turn = 0; turn < 10; turn += 1) {
  outcomes = [];
  const result = await generateText({ ...settings, messages });
  messages.push(...result.responseMessages);
  for (const call of result.steps.flatMap((step) => step.toolCalls))
    console.log(`\nmodel wrote:\n${indent(String((call.input as { code?: unknown }).code))}`);

  // 1. Pauses the AI SDK turned into approval requests: answer them like any AI SDK approval.
  const responses: ToolApprovalResponse[] = [];
  for (const part of result.content) {
    if (part.type !== "tool-approval-request" || part.isAutomatic) continue;
    // The reason lists every action waiting (one per line when there are several) and ends in a
    // `[codemode execution … seq … sig …]` marker for the adapter: show people the text.
    const approved = await askYesNo(approvalReasonText(part.reason) ?? `Run ${part.toolCall.toolName}?`);
    responses.push({
      type: "tool-approval-response",
      approvalId: part.approvalId,
      approved,
      ...(approved ? {} : { reason: "declined in the terminal" }),
    });
  }
  if (responses.length > 0) {
    messages.push({ role: "tool", content: responses });
    // A denial reaches the program now: the AI SDK calls no tool code for it.
    messages = await syncModelApprovals(messages, runtime, { by: "terminal user" });
    continue;
  }

  // 2. A run that paused again after an approval reports that pause as its result: decide here,
  //    each pending action on its own (a denied one rejects in the program as ApprovalDenied,
  //    which it may catch), as often as the run pauses, then show the model how it ended.
  const paused = outcomes.find((candidate) => candidate.status === "paused");
  if (paused) {
    let outcome: Outcome = paused;
    if (result.text) console.log(`\nmodel: ${result.text}`);
    while (outcome.status === "paused") {
      const decisions: Decision[] = [];
      for (const action of outcome.pending) {
        const approved = await askYesNo(`Approve ${describePendingAction(action)}?`);
        decisions.push(
          approved
            ? { seq: action.seq, decision: "approve" }
            : { seq: action.seq, decision: "deny", reason: "declined in the terminal" },
        );
      }
      outcome = report(await runtime.decide({ executionId: outcome.executionId, decisions, by: "terminal user" }));
    }
    // The paused result in the history now shows how the run ended, from the store.
    messages = await syncModelApprovals(messages, runtime);
    continue;
  }

  console.log(`\nmodel: ${result.text}`);
  break;
}

for (const execution of (await runtime.executions()).items) {
  const record = await runtime.execution(execution.id);
  console.log(`\nexecution ${execution.id}: ${execution.status}`);
  for (const entry of record?.log ?? []) {
    // runtime.decide records the kind; runtime.reject (no kind) ends the run.
    const kind = entry.decision?.decision ?? (entry.decision?.approved ? "approve" : undefined);
    const verdict = kind ? { approve: "approved", edit: "edited", deny: "denied" }[kind] : "rejected";
    const decision = entry.decision ? ` (${verdict} by ${entry.decision.by ?? "someone"})` : "";
    console.log(`  #${entry.seq} ${entry.connector}.${entry.method} ${entry.state}${decision}`);
  }
}
await runtime.close();

// --- helpers ---------------------------------------------------------------------------------------
function report(outcome: Outcome): Outcome {
  for (const line of outcome.logs ?? []) console.log(`  console: ${line}`);
  if (outcome.status === "completed") console.log(`  → completed: ${JSON.stringify(outcome.result)}`);
  else if (outcome.status === "paused")
    console.log(`  → paused at ${outcome.pending.map((action) => describePendingAction(action)).join(", ")}`);
  else console.log(`  → error ${outcome.code}: ${outcome.error}`);
  return outcome;
}

/** A stand-in model: writes the ordering program, then answers from the tool result it is shown. */
function scriptedModel(): MockLanguageModelV4 {
  const usage = {
    inputTokens: { total: 0, noCache: 0, cacheRead: undefined, cacheWrite: undefined },
    outputTokens: { total: 0, text: 0, reasoning: undefined },
  };
  const program = `async () => {
  const [mug] = await catalog.search_products({ query: "mug" });
  if (!mug || mug.stock < 2) return { ordered: false, reason: "not enough in stock" };
  console.log("ordering 2 x", mug.name, "at", mug.price);
  const order = await shop.create_order({ sku: mug.sku, quantity: 2 });
  return { ordered: true, orderId: order.orderId, total: mug.price * 2 };
}`;
  return new MockLanguageModelV4({
    doGenerate: async ({ prompt }) => {
      const toolMessages = prompt.filter((message) => message.role === "tool");
      if (toolMessages.length === 0) {
        const input = JSON.stringify({ code: program });
        return {
          content: [{ type: "tool-call", toolCallId: `call-${Date.now()}`, toolName: "codemode", input }],
          finishReason: { unified: "tool-calls", raw: undefined },
          usage,
          warnings: [],
        };
      }
      const output = toolMessages.at(-1)!.content.findLast((part) => part.type === "tool-result")?.output;
      const seen =
        output?.type === "json"
          ? (output.value as { status?: string; result?: { orderId?: string; total?: number }; error?: string })
          : undefined;
      const text =
        output?.type === "execution-denied"
          ? "Understood: I did not place the order."
          : seen?.status === "completed"
            ? `Done: order ${seen.result?.orderId} for two logo mugs, ${seen.result?.total} in total.`
            : seen?.status === "paused"
              ? "The order is waiting for your approval."
              : `That did not work: ${seen?.error ?? "no result"}.`;
      return {
        content: [{ type: "text", text }],
        finishReason: { unified: "stop", raw: undefined },
        usage,
        warnings: [],
      };
    },
  });
}
