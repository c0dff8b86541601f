/**
 * The application after a change to its tools, over the same store as codemode.config.ts: the
 * same `tickets` connector, but `create` now requires a `queue`, which the arguments recorded by
 * the runs paused before the change do not have. `codemode replay-check` finds them.
 */
import { defineConnector } from "@codemode/core";
import { openTicketsRuntime, tickets } from "./tickets.ts";

const ticketsRequiringQueue = defineConnector({
  ...tickets,
  tools: {
    ...tickets.tools,
    create: {
      ...tickets.tools.create!,
      inputSchema: {
        type: "object",
        properties: { title: { type: "string" }, priority: { type: "string" }, queue: { type: "string" } },
        required: ["title", "queue"],
      },
    },
  },
});

export default function createRuntime() {
  const store = process.env.CODEMODE_TEST_STORE;
  if (!store) throw new Error("CODEMODE_TEST_STORE is not set");
  return openTicketsRuntime(store, process.env.CODEMODE_TEST_NAME ?? "cli", 5_000, undefined, ticketsRequiringQueue);
}
