// The web chat's shop: a catalog, and orders that each need a human's approval. The Code Mode
// store and the orders live in one SQLite file, so a paused run — and every order placed — survive
// a restart of the server: whoever approves after the restart resumes the same run.
//
// Who may approve (R-AP-11): the chat approves orders of up to five items, and only approval
// requests this server signed for it; a larger order waits for the operator. The signing key
// (`approvalSecret`) is kept in the same file, so a request issued before a restart is still
// honoured after it (WEB_CHAT_APPROVAL_SECRET sets it instead).
import { randomBytes } from "node:crypto";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { type CodemodeRuntime, createCodemodeRuntime, defineConnector } from "@codemode/core";
import { sqliteStorage } from "@codemode/storage/sqlite";

const products = [
  { sku: "pen-blue", name: "Blue pen", price: 2.5, stock: 120 },
  { sku: "mug-logo", name: "Logo mug", price: 9, stock: 8 },
  { sku: "tee-m", name: "T-shirt (M)", price: 18, stock: 0 },
];

export interface Order {
  orderId: string;
  sku: string;
  quantity: number;
  placedAt: number;
}

export interface Shop {
  runtime: CodemodeRuntime;
  /** Orders really placed, newest first. */
  orders(): Order[];
  close(): Promise<void>;
}

/** The largest order a customer may approve in the chat. */
export const MAX_CHAT_APPROVED_QUANTITY = 5;

/** The approval-signing key kept in the shop's file: made once, the same after every restart. */
function keptSecret(database: DatabaseSync): string {
  database.exec("CREATE TABLE IF NOT EXISTS settings (name TEXT PRIMARY KEY, value TEXT NOT NULL)");
  database
    .prepare("INSERT OR IGNORE INTO settings (name, value) VALUES ('approval_secret', ?)")
    .run(randomBytes(32).toString("base64url"));
  return (database.prepare("SELECT value FROM settings WHERE name = 'approval_secret'").get() as { value: string })
    .value;
}

/** The shop over the SQLite file at `path` (created if missing). */
export function openShop(path: string): Shop {
  mkdirSync(dirname(path), { recursive: true });
  const database = new DatabaseSync(path, { timeout: 5_000 });
  database.exec(
    "CREATE TABLE IF NOT EXISTS orders (order_id TEXT PRIMARY KEY, sku TEXT NOT NULL, quantity INTEGER NOT NULL, placed_at INTEGER NOT NULL)",
  );
  // The idempotency key is the same on every attempt of one call: an order is placed at most once.
  const insert = database.prepare(
    "INSERT OR IGNORE INTO orders (order_id, sku, quantity, placed_at) VALUES (?, ?, ?, ?)",
  );
  const list = database.prepare(
    "SELECT order_id AS orderId, sku, quantity, placed_at AS placedAt FROM orders ORDER BY placed_at DESC",
  );

  const catalog = defineConnector({
    name: "catalog",
    instructions: "Read-only product catalog: name, price in EUR, stock.",
    tools: {
      search_products: {
        description: "Products whose name contains the query, with price and stock.",
        inputSchema: { type: "object", properties: { query: { type: "string" } }, required: ["query"] },
        execute: (args: { query: string }) =>
          products.filter((product) => product.name.toLowerCase().includes(args.query.toLowerCase())),
      },
    },
  });
  const shop = defineConnector({
    name: "shop",
    instructions: "Places orders; every order needs a human's approval.",
    tools: {
      create_order: {
        description: "Order a quantity of one product.",
        inputSchema: {
          type: "object",
          properties: { sku: { type: "string" }, quantity: { type: "integer", minimum: 1 } },
          required: ["sku", "quantity"],
        },
        requiresApproval: true,
        execute: (args: { sku: string; quantity: number }, context) => {
          const orderId = `ord-${context.idempotencyKey.slice(0, 8)}`;
          insert.run(orderId, args.sku, args.quantity, Date.now());
          return { orderId, sku: args.sku, quantity: args.quantity, status: "placed" };
        },
      },
    },
  });

  const storage = sqliteStorage(path);
  const runtime = createCodemodeRuntime({
    connectors: [catalog, shop],
    storage,
    limits: { timeoutMs: 10_000 },
    approvalSecret: process.env.WEB_CHAT_APPROVAL_SECRET ?? keptSecret(database),
    // The customer approves small orders in the chat; anything larger is the operator's call.
    chatApprovals: (action) =>
      action.method !== "create_order" ||
      Number((action.args as { quantity?: unknown }).quantity) <= MAX_CHAT_APPROVED_QUANTITY,
  });
  return {
    runtime,
    orders: () => list.all() as unknown as Order[],
    async close() {
      await runtime.close();
      await storage.close();
      database.close();
    },
  };
}
