// Quickstart: a "model" writes one program against two connectors; the approval-gated write
// pauses the run; you approve; the same code runs again, replays what it already did, and
// finishes. No keys, no servers: the runtime uses its in-memory store.
//
//   npm start
import { createInterface } from "node:readline/promises";
import { createCodemodeRuntime, defineConnector, type LogEntry, type Outcome } from "@codemode/core";

// --- two small connectors ---------------------------------------------------------------------
const products = [
  { sku: "pen-blue", name: "Blue pen", price: 2.5, stock: 120 },
  { sku: "mug-logo", name: "Logo mug", price: 9, stock: 8 },
  { sku: "tee-m", name: "T-shirt (M)", price: 18, stock: 0 },
];
const orders = new Map<string, { orderId: string; sku: string; quantity: number; status: string }>();

const catalog = defineConnector({
  name: "catalog",
  instructions: "Read-only product catalog.",
  tools: {
    search_products: {
      description: "Products whose name contains the query, with price and stock.",
      inputSchema: { type: "object", properties: { query: { type: "string" } }, required: ["query"] },
      execute: async (args: { query: string }) =>
        products.filter((product) => product.name.toLowerCase().includes(args.query.toLowerCase())),
    },
  },
});

const shop = defineConnector({
  name: "shop",
  instructions: "Places orders. Every order needs a human's approval.",
  tools: {
    create_order: {
      description: "Order a quantity of one product.",
      inputSchema: {
        type: "object",
        properties: { sku: { type: "string" }, quantity: { type: "integer", minimum: 1 } },
        required: ["sku", "quantity"],
      },
      requiresApproval: true,
      execute: async (args: { sku: string; quantity: number }, context) => {
        // The idempotency key is the same on every attempt of this call: use it to dedupe.
        const orderId = `ord-${context.idempotencyKey.slice(0, 8)}-${context.seq}`;
        orders.set(orderId, { orderId, sku: args.sku, quantity: args.quantity, status: "placed" });
        return { orderId, status: "placed" };
      },
      revert: async (_args: { sku: string; quantity: number }, result: { orderId: string }) => {
        const order = orders.get(result.orderId);
        if (order) order.status = "cancelled";
      },
    },
  },
});

// --- what the model wrote -------------------------------------------------------------------------
const program = `async () => {
  const found = await catalog.search_products({ query: "mug" });
  const inStock = found.filter((product) => product.stock > 0);
  if (inStock.length === 0) return { ordered: null, reason: "nothing in stock" };
  const choice = inStock[0];
  console.log("ordering", choice.name, "at", choice.price);
  const order = await shop.create_order({ sku: choice.sku, quantity: 2 });
  return { ordered: order.orderId, total: choice.price * 2 };
}`;

// --- the host ----------------------------------------------------------------------------------------
const runtime = createCodemodeRuntime({ connectors: [catalog, shop], limits: { timeoutMs: 10_000 } });

console.log("The model's program:\n");
console.log(indent(program));
console.log("\n→ runtime.execute({ code })");
let outcome: Outcome = await runtime.execute({ code: program });
report(outcome);

while (outcome.status === "paused") {
  const action = outcome.pending[0]!;
  const approved = await askApproval(`Approve ${action.connector}.${action.method}(${JSON.stringify(action.args)})?`);
  if (!approved) {
    await runtime.reject({ executionId: outcome.executionId, seq: action.seq, by: "quickstart user", reason: "declined in the terminal" });
    console.log("\nRejected. The execution ends 'rejected'; nothing was ordered.");
    break;
  }
  console.log(`\n→ runtime.approve({ executionId, seq: ${action.seq} })`);
  outcome = await runtime.approve({ executionId: outcome.executionId, seq: action.seq, by: "quickstart user" });
  report(outcome);
}

const record = await runtime.execution(outcome.executionId);
if (record) {
  console.log(`\nThe durable call log of execution ${record.id} (status: ${record.status}):\n`);
  printTable(record.log);
}
await runtime.close();

// --- helpers ---------------------------------------------------------------------------------------
function report(result: Outcome): void {
  for (const line of result.logs ?? []) console.log(`  console: ${line}`);
  if (result.status === "paused") {
    const action = result.pending[0]!;
    console.log(`  paused: ${action.connector}.${action.method} (seq ${action.seq}) needs approval`);
  } else if (result.status === "completed") {
    console.log(`  completed: ${JSON.stringify(result.result)}`);
  } else {
    console.log(`  error ${result.code}: ${result.error}`);
  }
}

async function askApproval(question: string): Promise<boolean> {
  if (!process.stdin.isTTY) {
    console.log(`\n${question} [y/N] y   (approved automatically: not a terminal)`);
    return true;
  }
  const prompt = createInterface({ input: process.stdin, output: process.stdout });
  try {
    const answer = await prompt.question(`\n${question} [y/N] `);
    return /^y(es)?$/i.test(answer.trim());
  } finally {
    prompt.close();
  }
}

function printTable(log: LogEntry[]): void {
  const rows = log.map((entry) => [
    String(entry.seq),
    `${entry.connector}.${entry.method}`,
    entry.state,
    entry.decision ? `${entry.decision.approved ? "approved" : "rejected"} by ${entry.decision.by ?? "?"}` : entry.requiresApproval ? "needs approval" : "",
    clip(JSON.stringify(entry.args) ?? ""),
    clip(entry.error ?? JSON.stringify(entry.result) ?? ""),
  ]);
  const header = ["seq", "call", "state", "approval", "args", "result"];
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column]!.length)));
  const line = (cells: string[]) => cells.map((cell, column) => cell.padEnd(widths[column]!)).join("  ");
  console.log(line(header));
  console.log(widths.map((width) => "-".repeat(width)).join("  "));
  for (const row of rows) console.log(line(row));
}

function clip(text: string): string {
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

function indent(text: string): string {
  return text
    .split("\n")
    .map((line) => `    ${line}`)
    .join("\n");
}
