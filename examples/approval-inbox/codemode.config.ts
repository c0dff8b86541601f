// The config module both the `codemode` command and this example load: the application's
// runtime (connectors + storage) and how to close what it opened. Node 24 loads it as it is.
//
//   npx codemode --config examples/approval-inbox/codemode.config.ts pending
//   npx codemode --config examples/approval-inbox/codemode.config.ts inbox
import { fileURLToPath } from "node:url";
import { createCodemodeRuntime, defineConnector } from "@codemode/core";
import { sqliteStorage } from "@codemode/storage/sqlite";

export const STORE_FILE = fileURLToPath(new URL("./.codemode/inbox.sqlite", import.meta.url));

const orders = defineConnector({
  name: "orders",
  instructions: "Customer orders.",
  tools: {
    find: {
      description: "Find an order by its number.",
      inputSchema: { type: "object", properties: { number: { type: "integer" } }, required: ["number"] },
      execute: async ({ number }: { number: number }) => ({
        number,
        customer: "alice@example.com",
        total: 84.5,
        currency: "EUR",
        items: ["mug", "teapot"],
      }),
    },
  },
});

const payments = defineConnector({
  name: "payments",
  instructions: "Refunds. Every refund needs a person's approval.",
  tools: {
    refund: {
      description: "Refund an order, in full or in part.",
      // The inbox's edit form checks a person's changes against this as they type; the runtime checks again.
      inputSchema: {
        type: "object",
        properties: {
          order: { type: "integer", minimum: 1 },
          amount: { type: "number", exclusiveMinimum: 0, maximum: 500 },
          currency: { type: "string", enum: ["EUR", "USD", "GBP"] },
          note: { type: "string", maxLength: 200 },
        },
        required: ["order", "amount", "currency"],
        additionalProperties: false,
      },
      requiresApproval: true,
      execute: async (args: { order: number; amount: number }, context) => ({
        refundId: `re_${context.idempotencyKey.slice(0, 8)}`,
        ...args,
      }),
      revert: async () => undefined,
    },
  },
});

const storage = sqliteStorage(STORE_FILE);
const runtime = createCodemodeRuntime({ name: "support", connectors: [orders, payments], storage });

export default runtime;
/** The command closes the runtime, then calls this. */
export const close = () => storage.close();
