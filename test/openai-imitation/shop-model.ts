/**
 * The imitated model of the shop stories: a few rules over the conversation the provider sent,
 * so what it answers depends only on what it was shown — like a real model, and unlike a script.
 *
 * - Asked to order, it writes the order program.
 * - Right after a `codemode` result, it reports that result.
 * - Asked "did my order go through?", it answers from the latest `codemode` result it can see;
 *   when it sees none (no program, no result), it does what a model would: it orders again.
 */
import type { Item, Reply } from "./server.ts";

export const orderProgram = `async () => {
  const [mug] = await catalog.search_products({ query: "mug" });
  const order = await shop.create_order({ sku: mug.sku, quantity: 2 });
  return { orderId: order.orderId, total: mug.price * 2 };
}`;

export function shopModel(items: Item[]): Reply {
  const last = items.at(-1);
  if (last?.type === "result") return { text: report(parse(last.output)) };
  const question = items.findLast((item) => item.type === "text" && item.role === "user");
  const text = question?.type === "text" ? question.text : "";
  if (/did my order go through/i.test(text)) {
    const seen = items.filter((item) => item.type === "result").map((item) => parse(item.output));
    const latest = seen.at(-1);
    if (latest) return { text: `Answer from what I was shown: ${report(latest)}` };
    return { call: { name: "codemode", arguments: { code: orderProgram } } };
  }
  if (/order/i.test(text)) return { call: { name: "codemode", arguments: { code: orderProgram } } };
  return { text: "How can I help?" };
}

/** The programs the provider was shown (the `code` of every `codemode` call in the request). */
export function programsShown(items: Item[]): string[] {
  return items
    .filter((item) => item.type === "call" && item.name === "codemode")
    .map((item) => (JSON.parse((item as { arguments: string }).arguments) as { code: string }).code);
}

/** The `codemode` results the provider was shown, parsed. */
export function resultsShown(items: Item[]): Array<Record<string, unknown>> {
  return items.filter((item) => item.type === "result").map((item) => parse((item as { output: string }).output));
}

function parse(output: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(output);
    return typeof value === "object" && value !== null ? (value as Record<string, unknown>) : { value };
  } catch {
    return { text: output };
  }
}

function report(outcome: Record<string, unknown>): string {
  const result = outcome.result as { orderId?: string; total?: number } | undefined;
  if (outcome.status === "completed" && result?.orderId)
    return `Order ${result.orderId} is placed (total ${result.total}).`;
  if (outcome.status === "paused") return "Your order waits for a human's approval.";
  return `The order did not go through (${String(outcome.status)}).`;
}
