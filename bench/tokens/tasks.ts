/**
 * The scripted tasks of the token benchmark, each written twice, as a competent model would do it:
 *
 * - **Direct calling:** the model reads every tool result and makes the next calls, several at
 *   once where they do not depend on each other (parallel tool calls), then answers.
 * - **Code Mode:** the model first asks for the signatures of the connectors it needs
 *   (`codemode.describe`, one program), then sends one program that does the work and returns a
 *   summary, then answers from that summary.
 *
 * Both answers are built by the same function from what each side learnt, so a task done both
 * ways ends with the same text; the benchmark checks that they match.
 *
 * The programs are written below as functions so that they read as code; the model sends their
 * source text (`String(fn)`), exactly as written.
 */
import type { Reply, ReplyCall } from "../../test/openai-imitation/server.ts";
import { TODAY } from "./task-tools.ts";

// The JSON the scripts read and the programs handle: untyped on purpose, as a model's reading of
// a result is.
// biome-ignore lint/suspicious/noExplicitAny: results as parsed JSON
type Json = any;
type Call<R> = (args: object) => Promise<R>;

// The connectors as the programs see them (globals in the sandbox, declared by `codemode.describe`).
declare const crm: { list_customers: Call<Json[]>; get_customer: Call<Json> };
declare const billing: { list_invoices: Call<Json[]> };
declare const mail: { send_email: Call<Json> };
declare const inventory: { list_products: Call<Json[]>; create_purchase_order: Call<Json> };
declare const support: { list_tickets: Call<Json[]>; tag_ticket: Call<Json>; reply_ticket: Call<Json> };
declare const orders: { get_order: Call<Json> };

/** The conversation so far, as the model reads it: each call with its arguments and parsed result. */
export interface Seen {
  calls(tool: string): Array<{ args: Json; output: Json }>;
}

export interface Task {
  name: string;
  prompt: string;
  /** Direct calling: the next reply of the model, from what it has seen. */
  direct(seen: Seen): Reply;
  codeMode: {
    /** The connectors whose signatures the model asks for first. */
    describe: string[];
    program: () => Promise<unknown>;
    /** The model's answer, from the program's result. */
    answer(result: Json): string;
  };
}

const calls = (list: Array<[string, unknown]>): Reply => ({
  calls: list.map(([name, args]): ReplyCall => ({ name, arguments: args })),
});

/** Code Mode: describe, then the program, then the answer. */
export function codeModeReply(task: Task, seen: Seen): Reply {
  const outcomes = seen.calls("codemode").map((call) => call.output);
  if (outcomes.length === 0) {
    const names = JSON.stringify(task.codeMode.describe);
    const code = `async () => {\n  const found = [];\n  for (const name of ${names}) found.push(await codemode.describe(name));\n  return found;\n}`;
    return { call: { name: "codemode", arguments: { code } } };
  }
  if (outcomes.length === 1) return { call: { name: "codemode", arguments: { code: String(task.codeMode.program) } } };
  const outcome = outcomes[1];
  if (outcome?.status !== "completed") throw new Error(`${task.name}: the program ended ${JSON.stringify(outcome)}`);
  return { text: task.codeMode.answer(outcome.result) };
}

// --- Overdue invoices in Berlin -------------------------------------------------------------

function reminderBody(customer: Json, overdue: Json[]): string {
  const lines = overdue.map(
    (invoice) => `- ${invoice.id}: ${invoice.amount} ${invoice.currency}, due ${invoice.dueDate}`,
  );
  return `Dear ${customer.name},\n\nthese invoices are overdue:\n${lines.join("\n")}\n\nPlease pay them soon.`;
}

function remindersAnswer(reminded: Array<{ customer: string; invoices: string[] }>): string {
  if (reminded.length === 0) return "No customer in Berlin has an overdue invoice.";
  const count = reminded.reduce((sum, entry) => sum + entry.invoices.length, 0);
  const list = reminded.map((entry) => `${entry.customer} (${entry.invoices.join(", ")})`).join("; ");
  return `I emailed ${reminded.length} customers in Berlin about ${count} overdue invoices: ${list}.`;
}

const overdueInBerlin: Task = {
  name: "overdue invoices in Berlin: find them, email each customer",
  prompt:
    "Find the overdue invoices of our customers in Berlin and email each of those customers one reminder " +
    "that lists their overdue invoices with amounts and due dates.",
  direct(seen) {
    const customers = seen.calls("crm_list_customers")[0]?.output;
    if (!customers) return calls([["crm_list_customers", { city: "Berlin" }]]);
    const invoices = seen.calls("billing_list_invoices");
    if (invoices.length === 0)
      return calls(
        customers.map((customer: Json) => ["billing_list_invoices", { customerId: customer.id, status: "overdue" }]),
      );
    const owing = customers
      .map((customer: Json) => ({
        customer,
        overdue: invoices.find((call) => call.args.customerId === customer.id)!.output as Json[],
      }))
      .filter((entry: Json) => entry.overdue.length > 0);
    if (owing.length > 0 && seen.calls("mail_send_email").length === 0)
      return calls(
        owing.map(({ customer, overdue }: Json) => [
          "mail_send_email",
          { to: customer.email, subject: "Overdue invoices", body: reminderBody(customer, overdue) },
        ]),
      );
    return {
      text: remindersAnswer(
        owing.map(({ customer, overdue }: Json) => ({
          customer: customer.name,
          invoices: overdue.map((invoice: Json) => invoice.id),
        })),
      ),
    };
  },
  codeMode: {
    describe: ["crm", "billing", "mail"],
    program: async () => {
      const customers = await crm.list_customers({ city: "Berlin" });
      const reminded = [];
      for (const customer of customers) {
        const overdue = await billing.list_invoices({ customerId: customer.id, status: "overdue" });
        if (overdue.length === 0) continue;
        const lines = overdue.map(
          (invoice) => `- ${invoice.id}: ${invoice.amount} ${invoice.currency}, due ${invoice.dueDate}`,
        );
        await mail.send_email({
          to: customer.email,
          subject: "Overdue invoices",
          body: `Dear ${customer.name},\n\nthese invoices are overdue:\n${lines.join("\n")}\n\nPlease pay them soon.`,
        });
        reminded.push({ customer: customer.name, invoices: overdue.map((invoice) => invoice.id) });
      }
      return reminded;
    },
    answer: remindersAnswer,
  },
};

// --- Restock ----------------------------------------------------------------------------------

function restockAnswer(placed: Array<{ sku: string; supplierId: string; quantity: number }>): string {
  if (placed.length === 0) return "Every product is at or above its reorder level; nothing ordered.";
  const list = placed.map((order) => `${order.sku} ×${order.quantity} from ${order.supplierId}`).join(", ");
  return `I placed ${placed.length} purchase orders: ${list}.`;
}

const restock: Task = {
  name: "restock: reorder every product below its reorder level",
  prompt:
    "Reorder every product whose stock is below its reorder level from its supplier, " +
    "enough to bring its stock to twice its reorder level.",
  direct(seen) {
    const products = seen.calls("inventory_list_products")[0]?.output;
    if (!products) return calls([["inventory_list_products", {}]]);
    const low = products
      .filter((product: Json) => product.stock < product.reorderLevel)
      .map((product: Json) => ({
        supplierId: product.supplierId,
        sku: product.sku,
        quantity: product.reorderLevel * 2 - product.stock,
      }));
    const placed = seen.calls("inventory_create_purchase_order");
    if (low.length > 0 && placed.length === 0)
      return calls(low.map((order: Json) => ["inventory_create_purchase_order", order]));
    return { text: restockAnswer(placed.map((call) => call.args)) };
  },
  codeMode: {
    describe: ["inventory"],
    program: async () => {
      const products = await inventory.list_products({});
      const placed = [];
      for (const product of products) {
        if (product.stock >= product.reorderLevel) continue;
        const quantity = product.reorderLevel * 2 - product.stock;
        await inventory.create_purchase_order({ supplierId: product.supplierId, sku: product.sku, quantity });
        placed.push({ sku: product.sku, supplierId: product.supplierId, quantity });
      }
      return placed;
    },
    answer: restockAnswer,
  },
};

// --- Refund tickets ---------------------------------------------------------------------------

const APPROVED_REPLY = "Your refund is approved and on its way; you will see it within five working days.";
const DECLINED_REPLY = "We are sorry: the order was delivered more than 30 days ago, so the return window has passed.";
const asksForRefund = (ticket: Json) => /refund|money back/i.test(`${ticket.subject} ${ticket.body}`);
const withinWindow = (order: Json) => Date.parse(TODAY) - Date.parse(order.deliveredAt) <= 30 * 86_400_000;

function refundsAnswer(decided: Array<{ ticket: string; approved: boolean }>): string {
  const approved = decided.filter((entry) => entry.approved).map((entry) => entry.ticket);
  const declined = decided.filter((entry) => !entry.approved).map((entry) => entry.ticket);
  return (
    `${decided.length} open tickets ask for a refund. Approved: ${approved.join(", ") || "none"}. ` +
    `Declined (delivered over 30 days ago): ${declined.join(", ") || "none"}. Each customer got a reply.`
  );
}

const refundTickets: Task = {
  name: "refund tickets: check each order's delivery date, tag and reply",
  prompt:
    `Today is ${TODAY}. Go through the open support tickets. For each one that asks for a refund, look up its ` +
    "order: if the order was delivered in the last 30 days, tag the ticket refund-approved and tell the customer " +
    "the refund is on its way; otherwise tag it refund-declined and explain that the 30-day window has passed.",
  direct(seen) {
    const tickets = seen.calls("support_list_tickets")[0]?.output;
    if (!tickets) return calls([["support_list_tickets", { status: "open" }]]);
    const refunds = tickets.filter(asksForRefund);
    const lookups = seen.calls("orders_get_order");
    if (refunds.length > 0 && lookups.length === 0)
      return calls(refunds.map((ticket: Json) => ["orders_get_order", { id: ticket.orderId }]));
    const decided = refunds.map((ticket: Json) => ({
      ticket: ticket.id,
      approved: withinWindow(lookups.find((call) => call.args.id === ticket.orderId)!.output),
    }));
    if (decided.length > 0 && seen.calls("support_tag_ticket").length === 0)
      return calls(
        decided.flatMap(
          ({ ticket, approved }: Json): Array<[string, unknown]> => [
            ["support_tag_ticket", { id: ticket, tag: approved ? "refund-approved" : "refund-declined" }],
            ["support_reply_ticket", { id: ticket, body: approved ? APPROVED_REPLY : DECLINED_REPLY }],
          ],
        ),
      );
    return { text: refundsAnswer(decided) };
  },
  codeMode: {
    describe: ["support", "orders"],
    program: async () => {
      const today = Date.parse("2026-11-30");
      const tickets = await support.list_tickets({ status: "open" });
      const decided = [];
      for (const ticket of tickets) {
        if (!/refund|money back/i.test(`${ticket.subject} ${ticket.body}`)) continue;
        const order = await orders.get_order({ id: ticket.orderId });
        const approved = today - Date.parse(order.deliveredAt) <= 30 * 86_400_000;
        await support.tag_ticket({ id: ticket.id, tag: approved ? "refund-approved" : "refund-declined" });
        await support.reply_ticket({
          id: ticket.id,
          body: approved
            ? "Your refund is approved and on its way; you will see it within five working days."
            : "We are sorry: the order was delivered more than 30 days ago, so the return window has passed.",
        });
        decided.push({ ticket: ticket.id, approved });
      }
      return decided;
    },
    answer: refundsAnswer,
  },
};

// --- One lookup: a task too small for Code Mode -------------------------------------------------

const emailAnswer = (customer: Json) => `${customer.name}'s email address is ${customer.email}.`;

const oneLookup: Task = {
  name: "one lookup: a customer's email address (too small for Code Mode)",
  prompt: "What is the email address of customer c-017?",
  direct(seen) {
    const customer = seen.calls("crm_get_customer")[0]?.output;
    if (!customer) return calls([["crm_get_customer", { id: "c-017" }]]);
    return { text: emailAnswer(customer) };
  },
  codeMode: {
    describe: ["crm"],
    program: async () => await crm.get_customer({ id: "c-017" }),
    answer: emailAnswer,
  },
};

export const TASKS: Task[] = [overdueInBerlin, restock, refundTickets, oneLookup];
