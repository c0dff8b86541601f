// The quickstart's shop: two connectors, and a runtime on a SQLite file so that a paused run
// survives the process that started it. main.ts and approve.ts both build their runtime here:
// whoever approves must configure the same connectors as whoever started the run.
import { fileURLToPath } from "node:url";
import { type CodemodeRuntime, createCodemodeRuntime, defineConnector, type Outcome } from "@codemode/core";
import type { CodemodeStorage } from "@codemode/storage";
import { sqliteStorage } from "@codemode/storage/sqlite";
import { printTable } from "../shared/terminal.ts";

/** Where the quickstart keeps its executions (gitignored). Delete it to start afresh. */
export const STORE_FILE = fileURLToPath(new URL("../../.codemode/quickstart.sqlite", import.meta.url));

const products = [
  { sku: "pen-blue", name: "Blue pen", price: 2.5, stock: 120 },
  { sku: "mug-logo", name: "Logo mug", price: 9, stock: 8 },
  { sku: "tee-m", name: "T-shirt (M)", price: 18, stock: 0 },
];
// A real shop would keep orders in its own database and dedupe on the idempotency key.
const orders = new Map<string, { orderId: string; sku: string; quantity: number; status: string }>();

export const catalog = defineConnector({
  name: "catalog",
  instructions: "Read-only product catalog.",
  tools: {
    search_products: {
      description: "Products whose name contains the query, with price and stock.",
      inputSchema: { type: "object", properties: { query: { type: "string" } }, required: ["query"] },
      // A lookup: recorded with one write, and simply run again if the host dies before it lands.
      readOnly: true,
      execute: async (args: { query: string }) =>
        products.filter((product) => product.name.toLowerCase().includes(args.query.toLowerCase())),
    },
  },
});

export const shop = defineConnector({
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

/** The runtime and the storage under it; close both when done. */
export function openShop(): { runtime: CodemodeRuntime; storage: CodemodeStorage } {
  const storage = sqliteStorage(STORE_FILE);
  const runtime = createCodemodeRuntime({
    name: "quickstart",
    connectors: [catalog, shop],
    storage,
    limits: { timeoutMs: 10_000 },
  });
  return { runtime, storage };
}

export function report(result: Outcome): void {
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

export async function printRecord(runtime: CodemodeRuntime, executionId: string): Promise<void> {
  const record = await runtime.execution(executionId);
  if (!record) return;
  console.log(`\nThe durable call log of execution ${record.id} (status: ${record.status}):\n`);
  printTable(record.log);
}
