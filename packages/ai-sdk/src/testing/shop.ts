// A small shop for the adapter's tests: a read-only catalog and approval-gated orders.
import {
  type CodemodeRuntime,
  type CodemodeRuntimeOptions,
  createCodemodeRuntime,
  defineConnector,
} from "@codemode/core";

export interface Shop {
  runtime: CodemodeRuntime;
  /** Orders placed, in order: proof of what really ran. */
  orders: Array<{ sku: string; quantity: number }>;
}

const products = [
  { sku: "pen-blue", name: "Blue pen", price: 2.5, stock: 120 },
  { sku: "mug-logo", name: "Logo mug", price: 9, stock: 8 },
];

/** `options` go to the runtime (`chatApprovals`, `approvalSecret`…); `orderApprovers` to the order tool. */
export function createShop(
  storage?: CodemodeRuntimeOptions["storage"],
  options: Partial<CodemodeRuntimeOptions> & { orderApprovers?: "chat" | "operator" } = {},
): Shop {
  const { orderApprovers, ...runtimeOptions } = options;
  const orders: Shop["orders"] = [];
  let liveReads = 0;
  const catalog = defineConnector({
    name: "catalog",
    instructions: "Read-only product catalog.",
    tools: {
      search_products: {
        description: "Products whose name contains the query.",
        inputSchema: { type: "object", properties: { query: { type: "string" } }, required: ["query"] },
        execute: (args: { query: string }) =>
          products.filter((product) => product.name.toLowerCase().includes(args.query.toLowerCase())),
      },
      // Re-run on every pass and different each time: code that feeds it into a gated call diverges.
      live_stock: { replay: "reexecute", execute: () => (liveReads += 1) },
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
        ...(orderApprovers ? { approvers: orderApprovers } : {}),
        execute: (args: { sku: string; quantity: number }) => {
          orders.push(args);
          return { orderId: `ord-${orders.length}`, ...args };
        },
      },
    },
  });
  const runtime = createCodemodeRuntime({
    connectors: [catalog, shop],
    limits: { timeoutMs: 10_000 },
    ...(storage ? { storage } : {}),
    ...runtimeOptions,
  });
  return { runtime, orders };
}

export const searchMugs = `async () => {
  const found = await catalog.search_products({ query: "mug" });
  return found.map((product) => product.sku);
}`;

export const orderMugs = `async () => {
  const [mug] = await catalog.search_products({ query: "mug" });
  const order = await shop.create_order({ sku: mug.sku, quantity: 2 });
  return { orderId: order.orderId, total: mug.price * 2 };
}`;

export const orderTwice = `async () => {
  const first = await shop.create_order({ sku: "mug-logo", quantity: 1 });
  const second = await shop.create_order({ sku: "pen-blue", quantity: 3 });
  return [first.orderId, second.orderId];
}`;

export const divergingOrder = `async () => {
  const stock = await catalog.live_stock({});
  return shop.create_order({ sku: "mug-logo", quantity: stock });
}`;

/** Two orders at once: the run pauses once with both pending (R-AP-8). */
export const orderBoth = `async () => {
  const [mug, pens] = await Promise.all([
    shop.create_order({ sku: "mug-logo", quantity: 1 }),
    shop.create_order({ sku: "pen-blue", quantity: 3 }),
  ]);
  return [mug, pens];
}`;

/** Three orders at once, each settled on its own: a denied one is reported, the others stand (R-AP-9). */
/** The arguments of the three orders of `orderThreeSettled`, as wire text (a denial's message shows them). */
export const THREE_ORDERS = [
  '{"sku":"mug-logo","quantity":1}',
  '{"sku":"pen-blue","quantity":3}',
  '{"sku":"pen-blue","quantity":9}',
] as const;

export const orderThreeSettled = `async () => {
  const settled = await Promise.allSettled([
    shop.create_order({ sku: "mug-logo", quantity: 1 }),
    shop.create_order({ sku: "pen-blue", quantity: 3 }),
    shop.create_order({ sku: "pen-blue", quantity: 9 }),
  ]);
  return settled.map((each) => (each.status === "fulfilled" ? each.value : \`\${each.reason.name}: \${each.reason.message}\`));
}`;
