// The approval inbox example (`npm run example:inbox`): a support agent's programs pause at
// refunds; an application mounts the approval inbox at /inbox beside its own pages and a person
// approves, denies or edits each refund in the browser, live. The same runs can be decided from a
// terminal with the `codemode` command. Read examples/approval-inbox/README.md alongside.
import { randomBytes } from "node:crypto";
import { createServer } from "node:http";
import { createApprovalInbox } from "@codemode/cli/inbox";
import runtime, { close, STORE_FILE } from "./codemode.config.ts";

// --- what the model wrote: two refunds that need a person ---------------------------------------
const refund = (order: number, share: number, note: string) => `async () => {
  const order = await orders.find({ number: ${order} });
  const refund = await payments.refund({ order: order.number, amount: Math.round(order.total * ${share} * 100) / 100, currency: order.currency, note: ${JSON.stringify(note)} });
  return refund.refundId;
}`;
// Two refunds at once: the run pauses once with both pending, each decided on its own (R-AP-8).
const twoRefunds = `async () => {
  const refunds = await Promise.all([1044, 1045].map(async (number) => {
    const order = await orders.find({ number });
    return payments.refund({ order: order.number, amount: order.total, currency: order.currency, note: "late delivery" });
  }));
  return refunds.map((refund) => refund.refundId);
}`;
for (const program of [
  refund(1042, 1, "parcel lost in transit"),
  refund(1043, 0.5, "one item arrived broken"),
  twoRefunds,
]) {
  const outcome = await runtime.execute({ code: program });
  const waiting =
    outcome.status === "paused"
      ? ` at ${outcome.pending.map((action) => `${action.connector}.${action.method} (seq ${action.seq})`).join(", ")}`
      : "";
  console.log(`${outcome.executionId}: ${outcome.status}${waiting}`);
}

// --- the application: its own pages, and the inbox mounted at /inbox --------------------------
const token = process.env.INBOX_TOKEN ?? randomBytes(24).toString("base64url");
const inbox = createApprovalInbox({ runtime, token, basePath: "/inbox", operator: "support lead" });
const server = createServer((request, response) => {
  if (request.url?.startsWith("/inbox")) return inbox.handler(request, response);
  response.writeHead(200, { "content-type": "text/plain; charset=utf-8" });
  response.end("The application's own pages. The approval inbox is at /inbox (it needs its token).\n");
});
const port = Number(process.env.PORT ?? 8787);
server.listen(port, "127.0.0.1", () => {
  console.log(`\nStore: ${STORE_FILE}`);
  console.log(`Approval inbox: http://127.0.0.1:${port}/inbox/?token=${token}`);
  console.log(`From a terminal: npx codemode --config examples/approval-inbox/codemode.config.ts pending`);
  console.log("Ctrl-C stops it.");
});

const stop = async () => {
  await inbox.close();
  server.closeAllConnections();
  server.close();
  await runtime.close();
  await close();
  process.exit(0);
};
process.once("SIGINT", () => void stop());
process.once("SIGTERM", () => void stop());
// Under CI (no terminal) the example shows that it starts, then leaves.
if (!process.stdout.isTTY && process.env.CI) setTimeout(() => void stop(), 1_000);
