/**
 * The business the token benchmark's tasks run against: customers, invoices, products,
 * suppliers, support tickets and orders, made by a seeded generator so every run sends the
 * model the same bytes. Its tools are written once, as connectors with plain JSON Schemas and
 * descriptions; bench/tokens/tool-sets.ts hands the same definitions to the model as AI SDK tools
 * (direct calling) or through the Code Mode tool.
 */

import { type Connector, defineConnector } from "@codemode/core";

/** The date the tasks treat as today: invoices due before it are overdue. */
export const TODAY = "2026-11-30";

function seeded(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const random = seeded(20261203);
const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
const between = (low: number, high: number) => low + Math.floor(random() * (high - low + 1));
const pad = (value: number, width: number) => String(value).padStart(width, "0");
const day = (offset: number) => new Date(Date.parse(TODAY) + offset * 86_400_000).toISOString().slice(0, 10);

const FIRST = ["Anna", "Ben", "Clara", "David", "Elif", "Finn", "Greta", "Hugo", "Ines", "Jonas", "Kira", "Lukas"];
const LAST = ["Schmidt", "Weber", "Yilmaz", "Fischer", "Novak", "Berger", "Hoffmann", "Keller", "Wagner", "Roth"];
const CITIES = ["Berlin", "Hamburg", "Munich", "Cologne", "Vienna", "Zurich"];
const SEGMENTS = ["retail", "wholesale", "enterprise"];

export const customers = Array.from({ length: 40 }, (_, index) => {
  const name = `${FIRST[index % FIRST.length]} ${pick(LAST)}`;
  return {
    id: `c-${pad(index + 1, 3)}`,
    name,
    email: `${name.toLowerCase().replace(" ", ".")}@example.com`,
    city: index % 5 === 0 ? "Berlin" : pick(CITIES),
    segment: pick(SEGMENTS),
    customerSince: day(-between(100, 2000)),
  };
});

const ITEMS = ["Consulting hours", "Support plan", "Licence seat", "Training day", "Hardware lease", "Setup fee"];
let invoiceNumber = 1000;
export const invoices = customers.flatMap((customer) =>
  Array.from({ length: between(2, 5) }, () => {
    const issued = -between(5, 120);
    const dueDate = day(issued + 30);
    const lines = Array.from({ length: between(1, 3) }, () => ({
      description: pick(ITEMS),
      quantity: between(1, 10),
      unitPrice: between(40, 400),
    }));
    const amount = lines.reduce((sum, line) => sum + line.quantity * line.unitPrice, 0);
    const paid = random() < 0.55;
    const status = paid ? "paid" : dueDate < TODAY ? "overdue" : "open";
    return {
      id: `inv-${++invoiceNumber}`,
      customerId: customer.id,
      issued: day(issued),
      dueDate,
      amount,
      currency: "EUR",
      status,
      lines,
    };
  }),
);

export const suppliers = ["Nordic Paper", "Rhein Office", "Alpine Tools", "Baltic Print", "Danube Supply"].map(
  (name, index) => ({
    id: `sup-${index + 1}`,
    name,
    email: `orders@${name.toLowerCase().replace(" ", "-")}.example`,
    leadTimeDays: between(2, 14),
  }),
);

const PRODUCTS = ["Notebook", "Pen", "Stapler", "Folder", "Label roll", "Desk lamp", "Cable", "Toner", "Chair mat"];
const CATEGORIES = ["paper", "writing", "desk", "print", "electronics"];
export const products = Array.from({ length: 60 }, (_, index) => {
  const reorderLevel = between(10, 50);
  return {
    sku: `sku-${pad(index + 1, 3)}`,
    name: `${pick(PRODUCTS)} ${pick(["A4", "A5", "blue", "black", "large", "small", "pro", "eco"])}`,
    category: pick(CATEGORIES),
    stock: index % 8 === 3 ? between(0, reorderLevel - 1) : between(reorderLevel, reorderLevel * 4),
    reorderLevel,
    supplierId: pick(suppliers).id,
    unitCost: between(1, 80),
  };
});

export const orders = Array.from({ length: 30 }, (_, index) => ({
  id: `ord-${pad(5000 + index, 5)}`,
  customerId: pick(customers).id,
  items: [{ sku: pick(products).sku, quantity: between(1, 5) }],
  total: between(20, 600),
  deliveredAt: day(-between(3, 70)),
}));

const REQUESTS = [
  { subject: "Where is my invoice?", body: "I cannot find the invoice for my last order. Could you send it again?" },
  { subject: "Wrong colour delivered", body: "I ordered blue and got black. I would like a refund please." },
  { subject: "Refund request", body: "The item arrived broken. Please refund the order." },
  { subject: "Change of address", body: "We moved to a new office, please update our delivery address." },
  { subject: "Question about delivery time", body: "How long does shipping to Vienna usually take?" },
  { subject: "Not what I expected", body: "The quality is poor and I want my money back (refund)." },
];
export const tickets = Array.from({ length: 25 }, (_, index) => {
  const request = REQUESTS[index % REQUESTS.length]!;
  const order = orders[index % orders.length]!;
  return {
    id: `t-${pad(700 + index, 4)}`,
    customerId: order.customerId,
    orderId: order.id,
    subject: request.subject,
    body: request.body,
    status: index % 7 === 6 ? "closed" : "open",
    createdAt: day(-between(0, 6)),
  };
});

const string = (description: string) => ({ type: "string", description });
const text = { type: "string" };
const integer = { type: "integer" };
const list = (items: unknown) => ({ type: "array", items });
const record = (properties: Record<string, unknown>) => ({
  type: "object",
  properties,
  required: Object.keys(properties),
});
// What the tools return, declared so that `codemode.describe` shows the fields a program reads
// (a model writing a program cannot see a result before it runs). Direct calling sends no output
// schemas: the model reads the results themselves.
const CUSTOMER = record({ id: text, name: text, email: text, city: text, segment: text, customerSince: text });
const INVOICE = record({
  id: text,
  customerId: text,
  issued: text,
  dueDate: text,
  amount: integer,
  currency: text,
  status: { type: "string", enum: ["open", "paid", "overdue"] },
  lines: list(record({ description: text, quantity: integer, unitPrice: integer })),
});
const PRODUCT = record({
  sku: text,
  name: text,
  category: text,
  stock: integer,
  reorderLevel: integer,
  supplierId: text,
  unitCost: integer,
});
const TICKET = record({
  id: text,
  customerId: text,
  orderId: text,
  subject: text,
  body: text,
  status: text,
  createdAt: text,
});
const ORDER = record({
  id: text,
  customerId: text,
  items: list(record({ sku: text, quantity: integer })),
  total: integer,
  deliveredAt: { type: "string", description: "Date of delivery, YYYY-MM-DD." },
});
const object = (properties: Record<string, unknown>, required: string[] = []) => ({
  type: "object",
  properties,
  required,
  additionalProperties: false,
});

/** The six connectors of the tasks: 11 tools. */
export const TASK_CONNECTORS: Connector[] = [
  defineConnector({
    name: "crm",
    tools: {
      list_customers: {
        description: "Customers, optionally only those in one city or segment.",
        outputSchema: list(CUSTOMER),
        inputSchema: object({
          city: string("City name, e.g. Berlin."),
          segment: { type: "string", enum: SEGMENTS, description: "Customer segment." },
        }),
        execute: (args: { city?: string; segment?: string }) =>
          customers.filter(
            (customer) =>
              (!args.city || customer.city === args.city) && (!args.segment || customer.segment === args.segment),
          ),
      },
      get_customer: {
        description: "One customer by id.",
        outputSchema: CUSTOMER,
        inputSchema: object({ id: string("Customer id, e.g. c-001.") }, ["id"]),
        execute: (args: { id: string }) => customers.find((customer) => customer.id === args.id) ?? null,
      },
    },
  }),
  defineConnector({
    name: "billing",
    tools: {
      list_invoices: {
        description: "A customer's invoices with their lines, optionally only those with one status.",
        outputSchema: list(INVOICE),
        inputSchema: object(
          {
            customerId: string("Customer id."),
            status: { type: "string", enum: ["open", "paid", "overdue"], description: "Invoice status." },
          },
          ["customerId"],
        ),
        execute: (args: { customerId: string; status?: string }) =>
          invoices.filter(
            (invoice) => invoice.customerId === args.customerId && (!args.status || invoice.status === args.status),
          ),
      },
    },
  }),
  defineConnector({
    name: "mail",
    tools: {
      send_email: {
        description: "Send a plain-text email.",
        outputSchema: record({ messageId: text, status: text }),
        inputSchema: object(
          { to: string("Recipient address."), subject: string("Subject line."), body: string("Plain-text body.") },
          ["to", "subject", "body"],
        ),
        execute: (args: { to: string }) => ({ messageId: `msg-${args.to.split("@")[0]}`, status: "sent" }),
      },
    },
  }),
  defineConnector({
    name: "inventory",
    tools: {
      list_products: {
        description: "Products with stock, reorder level, supplier and unit cost; optionally one category.",
        outputSchema: list(PRODUCT),
        inputSchema: object({ category: { type: "string", enum: CATEGORIES, description: "Product category." } }),
        execute: (args: { category?: string }) =>
          products.filter((product) => !args.category || product.category === args.category),
      },
      get_supplier: {
        description: "One supplier by id, with contact and lead time.",
        outputSchema: record({ id: text, name: text, email: text, leadTimeDays: integer }),
        inputSchema: object({ id: string("Supplier id, e.g. sup-1.") }, ["id"]),
        execute: (args: { id: string }) => suppliers.find((supplier) => supplier.id === args.id) ?? null,
      },
      create_purchase_order: {
        description: "Order a quantity of one product from a supplier.",
        outputSchema: record({ purchaseOrderId: text, quantity: integer, status: text }),
        inputSchema: object(
          {
            supplierId: string("Supplier id."),
            sku: string("Product SKU."),
            quantity: { type: "integer", minimum: 1, description: "Units to order." },
          },
          ["supplierId", "sku", "quantity"],
        ),
        execute: (args: { sku: string; quantity: number }) => ({
          purchaseOrderId: `po-${args.sku}`,
          quantity: args.quantity,
          status: "placed",
        }),
      },
    },
  }),
  defineConnector({
    name: "support",
    tools: {
      list_tickets: {
        description: "Support tickets, optionally only open or closed ones.",
        outputSchema: list(TICKET),
        inputSchema: object({ status: { type: "string", enum: ["open", "closed"], description: "Ticket status." } }),
        execute: (args: { status?: string }) =>
          tickets.filter((ticket) => !args.status || ticket.status === args.status),
      },
      tag_ticket: {
        description: "Add a tag to a ticket.",
        outputSchema: record({ id: text, tags: list(text) }),
        inputSchema: object({ id: string("Ticket id."), tag: string("Tag to add.") }, ["id", "tag"]),
        execute: (args: { id: string; tag: string }) => ({ id: args.id, tags: [args.tag] }),
      },
      reply_ticket: {
        description: "Reply to the customer on a ticket.",
        outputSchema: record({ id: text, replied: { type: "boolean" } }),
        inputSchema: object({ id: string("Ticket id."), body: string("Reply text.") }, ["id", "body"]),
        execute: (args: { id: string }) => ({ id: args.id, replied: true }),
      },
    },
  }),
  defineConnector({
    name: "orders",
    tools: {
      get_order: {
        description: "One order by id, with its items, total and delivery date.",
        outputSchema: ORDER,
        inputSchema: object({ id: string("Order id, e.g. ord-05000.") }, ["id"]),
        execute: (args: { id: string }) => orders.find((order) => order.id === args.id) ?? null,
      },
    },
  }),
];
