/**
 * The imitated model of the story of an order placed beside an order denied (R-AP-9), by the same
 * kind of rules as shop-model.ts, so what it says depends only on what it was shown:
 *
 * - Asked to order a mug and a pen, it writes the natural program: both orders at once with
 *   `Promise.all`, and a denial caught and returned.
 * - Asked "did my orders go through?" (or right after a result), it reports the latest `codemode`
 *   result it can see: each decided call that ran and each that was denied when the result lists
 *   them (`decided`), else only what the program returned.
 */
import type { Item, Reply } from "./server.ts";

export const mugAndPenCatchingProgram = `async () => {
  try {
    const [mug, pen] = await Promise.all([
      shop.create_order({ sku: "mug-logo", quantity: 1 }),
      shop.create_order({ sku: "pen-blue", quantity: 3 }),
    ]);
    return { orders: [mug, pen] };
  } catch (e) {
    if (e.name === "ApprovalDenied") return { denied: e.message };
    throw e;
  }
}`;

export function mugAndPenModel(items: Item[]): Reply {
  const order = { call: { name: "codemode", arguments: { code: mugAndPenCatchingProgram } } };
  const question = items.findLast((item) => item.type === "text" && item.role === "user");
  const text = question?.type === "text" ? question.text : "";
  const latest = items.filter((item) => item.type === "result").at(-1);
  if (items.at(-1)?.type === "result" || /did my orders go through/i.test(text))
    return latest?.type === "result" ? { text: report(JSON.parse(latest.output) as Shown) } : order;
  return /order/i.test(text) ? order : { text: "How can I help?" };
}

interface Shown {
  status: string;
  result?: { denied?: string };
  decided?: Array<{ call: string; args: unknown; outcome: string; result?: string; by?: string; reason?: string }>;
}

function report(shown: Shown): string {
  if (shown.status === "paused") return "Your orders wait for a human's approval.";
  if (!shown.decided) return shown.result?.denied ? `The order was denied: ${shown.result.denied}` : "Done.";
  return shown.decided
    .map((call) =>
      call.outcome === "ran"
        ? `placed ${JSON.stringify(call.args)}: ${call.result}`
        : `${call.outcome} ${JSON.stringify(call.args)}${call.by ? ` by ${call.by}` : ""}${call.reason ? ` (${call.reason})` : ""}`,
    )
    .join("; ");
}
