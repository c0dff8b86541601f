/**
 * The imitated model of the shop stories: a few rules over the conversation the provider sent,
 * so what it answers depends only on what it was shown — like a real model, and unlike a script.
 *
 * - Asked to order, it writes the order program.
 * - Right after a `codemode` result, it reports that result.
 * - Asked "did my order go through?", it answers from the latest `codemode` result it can see;
 *   when it sees none (no program, no result), it does what a model would: it orders again.
 * - Asked for two orders at once, it writes a program that places both with `Promise.all`, so the
 *   run waits on two approvals in one pause (R-AP-8).
 */
import type { Item, Reply } from "./server.ts";

export const orderProgram = `async () => {
  const [mug] = await catalog.search_products({ query: "mug" });
  const order = await shop.create_order({ sku: mug.sku, quantity: 2 });
  return { orderId: order.orderId, total: mug.price * 2 };
}`;

/** Two orders of mugs at once: both `create_order` calls are pending in the same pause. */
export const twoMugOrdersProgram = `async () => {
  const [mug] = await catalog.search_products({ query: "mug" });
  const orders = await Promise.all([
    shop.create_order({ sku: mug.sku, quantity: 2 }),
    shop.create_order({ sku: mug.sku, quantity: 5 }),
  ]);
  return { orderIds: orders.map((order) => order.orderId), quantities: orders.map((order) => order.quantity) };
}`;

export function shopModel(items: Item[]): Reply {
  const last = items.at(-1);
  if (last?.type === "result") return { text: report(parse(last.output)) };
  const question = items.findLast((item) => item.type === "text" && item.role === "user");
  const text = question?.type === "text" ? question.text : "";
  if (/two orders at once/i.test(text)) return { call: { name: "codemode", arguments: { code: twoMugOrdersProgram } } };
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
  const several = outcome.result as { orderIds?: unknown; quantities?: unknown } | undefined;
  if (outcome.status === "completed" && Array.isArray(several?.orderIds) && Array.isArray(several.quantities))
    return `Orders ${several.orderIds.join(" and ")} are placed (${several.quantities.join(" and ")} mugs).`;
  if (outcome.status === "paused") return "Your order waits for a human's approval.";
  return `The order did not go through (${String(outcome.status)}).`;
}

/** A mug and pens ordered in one program: the run pauses once with both orders pending (R-AP-8). */
export const mugAndPensProgram = `async () => {
  const [mug, pens] = await Promise.all([
    shop.create_order({ sku: "mug-logo", quantity: 1 }),
    shop.create_order({ sku: "pen-blue", quantity: 3 }),
  ]);
  return { orders: [mug, pens] };
}`;

/**
 * The imitated model of the story of a batch decided per action in an inbox, by the same kind of rules:
 *
 * - Asked to order a mug and pens, it writes one program that orders both at once.
 * - Right after a `codemode` result, it reports each order in it.
 * - Asked "did my orders go through?", it answers from the latest `codemode` result it can see;
 *   when it sees none, it orders again.
 */
export function mugAndPensModel(items: Item[]): Reply {
  const order = { call: { name: "codemode", arguments: { code: mugAndPensProgram } } };
  const last = items.at(-1);
  if (last?.type === "result") return { text: reportMugAndPens(parse(last.output)) };
  const question = items.findLast((item) => item.type === "text" && item.role === "user");
  const text = question?.type === "text" ? question.text : "";
  if (/did my orders go through/i.test(text)) {
    const latest = items.filter((item) => item.type === "result").at(-1);
    return latest?.type === "result"
      ? { text: `Answer from what I was shown: ${reportMugAndPens(parse(latest.output))}` }
      : order;
  }
  return /order/i.test(text) ? order : { text: "How can I help?" };
}

function reportMugAndPens(outcome: Record<string, unknown>): string {
  const placed = (outcome.result as { orders?: Array<{ orderId: string; sku: string; quantity: number }> } | undefined)
    ?.orders;
  if (outcome.status === "completed" && placed)
    return `${placed.map((each) => `${each.orderId}: ${each.quantity} × ${each.sku}`).join("; ")}.`;
  if (outcome.status === "paused") return "Your orders wait for a human's approval.";
  return `The orders did not go through (${String(outcome.status)}).`;
}
