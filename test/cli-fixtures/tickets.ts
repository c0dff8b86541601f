/**
 * The runtime the CLI and inbox tests operate: a `tickets` connector (listing is free, creating
 * needs approval and can be reverted) over a real SQLite file or Redis. Imported by the test
 * process (to make runs) and by the config module the `codemode` bin loads in a child process.
 */
import { type CodemodeRuntime, type Connector, createCodemodeRuntime, defineConnector } from "@codemode/core";
import { redisStorage } from "@codemode/storage/redis";
import { sqliteStorage } from "@codemode/storage/sqlite";

export const tickets = defineConnector({
  name: "tickets",
  instructions: "Support tickets.",
  tools: {
    list: {
      description: "List tickets by status.",
      inputSchema: { type: "object", properties: { status: { type: "string" } }, required: ["status"] },
      execute: async (args: { status: string }) => [
        { id: 7, status: args.status, customer: "alice@example.com", subject: "Refund for order 1042" },
      ],
    },
    create: {
      description: "Open a ticket.",
      inputSchema: {
        type: "object",
        properties: { title: { type: "string" }, priority: { type: "string" } },
        required: ["title"],
      },
      requiresApproval: true,
      execute: async (args: { title: string }) => ({ id: 101, title: args.title }),
      revert: async () => undefined,
    },
  },
});

/** Lists, then opens a ticket (pauses for approval), then returns the new ticket's id. */
export const GATED_PROGRAM = `async () => {
  const open = await tickets.list({ status: "open" });
  const created = await tickets.create({ title: "Refund " + open[0].customer, priority: "high" });
  return created.id;
}`;

/** Completes without asking anyone. */
export const FREE_PROGRAM = `async () => (await tickets.list({ status: "closed" })).length`;

/**
 * `sqlite:<file>` or a `redis://` URL; `name` keeps each test's runs apart in a shared Redis.
 * `connectTimeoutMs` bounds how long a Redis that is not there is waited for. `connector` is
 * `tickets` as it is, or as a changed version of the application configures it.
 */
export function openTicketsRuntime(
  store: string,
  name: string,
  connectTimeoutMs = 5_000,
  maxPassesInFlight?: number,
  connector: Connector = tickets,
): { runtime: CodemodeRuntime; close(): Promise<void> } {
  const storage = store.startsWith("sqlite:")
    ? sqliteStorage(store.slice("sqlite:".length))
    : redisStorage(store, { namespace: "codemode-cli-test", connectTimeoutMs });
  const runtime = createCodemodeRuntime({
    name,
    connectors: [connector],
    storage,
    lockWaitMs: 2_000,
    ...(maxPassesInFlight ? { maxPassesInFlight } : {}),
  });
  return {
    runtime,
    async close() {
      await runtime.close();
      await storage.close();
    },
  };
}
