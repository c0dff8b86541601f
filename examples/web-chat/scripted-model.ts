// A stand-in for OpenAI when OPENAI_API_KEY is not set: a few rules over the prompt it is sent,
// so it answers from what it is shown, like a real model (and keeps working across restarts).
// Asked to order, it writes a Code Mode program; shown a codemode result, it reports it; asked
// whether an order went through, it answers from the latest result in the conversation.
import { MockLanguageModelV4 } from "ai/test";

type Prompt = Parameters<MockLanguageModelV4["doStream"]>[0]["prompt"];
type StreamPart =
  Awaited<ReturnType<MockLanguageModelV4["doStream"]>>["stream"] extends ReadableStream<infer Part> ? Part : never;
type Seen = {
  status?: string;
  result?: Record<string, unknown>;
  error?: string;
  type?: string;
  reason?: string;
  value?: unknown;
};

const NUMBERS: Record<string, number> = {
  one: 1,
  a: 1,
  an: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
};
const usage = {
  inputTokens: { total: 0, noCache: 0, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 0, text: 0, reasoning: undefined },
};

export function scriptedModel(): MockLanguageModelV4 {
  return new MockLanguageModelV4({
    provider: "scripted",
    modelId: "shop-rules",
    doStream: async ({ prompt }) => ({ stream: streamOf(answer(prompt)) }),
  });
}

function answer(prompt: Prompt): { text: string } | { code: string } {
  const last = prompt.at(-1);
  if (last?.role === "tool") return { text: report(latestResult(prompt)) };
  const question =
    last?.role === "user" ? last.content.map((part) => (part.type === "text" ? part.text : "")).join(" ") : "";
  if (/go through|placed\?|status|did (it|my order)/i.test(question)) {
    const seen = latestResult(prompt);
    return { text: seen ? `Here is what I know: ${report(seen)}` : "I see no order in this conversation yet." };
  }
  if (/\b(order|buy)\b/i.test(question)) return { code: orderProgram(question) };
  return { text: "I can look up products and place orders (each order needs approval). Try: “Order two logo mugs.”" };
}

function orderProgram(question: string): string {
  const words = question.toLowerCase().match(/\b(\d+|one|an?|two|three|four|five|six|seven|eight|nine|ten)\b/);
  const quantity = words ? (NUMBERS[words[1]!] ?? Number(words[1])) : 1;
  const query = /pen/i.test(question) ? "pen" : /shirt|tee/i.test(question) ? "shirt" : "mug";
  return `async () => {
  const [product] = await catalog.search_products({ query: ${JSON.stringify(query)} });
  if (!product) return { ordered: false, reason: "no such product" };
  if (product.stock < ${quantity}) return { ordered: false, reason: "only " + product.stock + " in stock" };
  const order = await shop.create_order({ sku: product.sku, quantity: ${quantity} });
  return { ordered: true, orderId: order.orderId, item: product.name, quantity: ${quantity}, total: product.price * ${quantity} };
}`;
}

/** The output of the latest codemode tool result in the prompt: a JSON outcome, a denial, or error text. */
function latestResult(prompt: Prompt): Seen | undefined {
  for (const message of [...prompt].reverse()) {
    if (message.role !== "tool") continue;
    const part = message.content.findLast((candidate) => candidate.type === "tool-result");
    if (part?.type !== "tool-result") continue;
    const output = part.output;
    if (output.type === "json") return output.value as Seen;
    if (output.type === "execution-denied")
      return { type: "denied", ...(output.reason ? { reason: output.reason } : {}) };
    if (output.type === "error-text" || output.type === "text") return { type: "denied", reason: output.value };
  }
  return undefined;
}

function report(seen: Seen | undefined): string {
  const result = seen?.result as
    | { ordered?: boolean; orderId?: string; item?: string; quantity?: number; total?: number; reason?: string }
    | undefined;
  if (seen?.status === "completed" && result?.ordered)
    return `Order ${result.orderId} is placed: ${result.quantity} × ${result.item}, ${result.total} EUR in total.`;
  if (seen?.status === "completed") return `I did not order: ${result?.reason ?? "nothing to order"}.`;
  if (seen?.status === "paused")
    return "The order waits for approval: approve it here if the chat offers it, or ask an operator.";
  if (seen?.status === "rejected" || seen?.type === "denied") return "The order was rejected, so nothing was placed.";
  return `That did not work: ${seen?.error ?? "no result"}.`;
}

function streamOf(turn: { text: string } | { code: string }): ReadableStream<StreamPart> {
  const parts: StreamPart[] = [{ type: "stream-start", warnings: [] }];
  if ("text" in turn) {
    parts.push({ type: "text-start", id: "t" });
    for (const word of turn.text.split(/(?<= )/)) parts.push({ type: "text-delta", id: "t", delta: word });
    parts.push(
      { type: "text-end", id: "t" },
      { type: "finish", finishReason: { unified: "stop", raw: "stop" }, usage },
    );
  } else {
    parts.push({
      type: "tool-call",
      toolCallId: `call-${crypto.randomUUID()}`,
      toolName: "codemode",
      input: JSON.stringify({ code: turn.code }),
    });
    parts.push({ type: "finish", finishReason: { unified: "tool-calls", raw: "tool_calls" }, usage });
  }
  return new ReadableStream({
    start(controller) {
      for (const part of parts) controller.enqueue(part);
      controller.close();
    },
  });
}
