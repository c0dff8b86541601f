/**
 * A `codemode-mcp --config` module for the MCP tasks tests: the `tickets` runtime over the SQLite
 * file (or Redis) named by the environment, so several server processes and the `codemode` CLI
 * share one store. Polls quickly, for the tests.
 */
import { openTicketsRuntime } from "../cli-fixtures/tickets.ts";

export default function createRuntime() {
  const store = process.env.CODEMODE_TEST_STORE;
  if (!store) throw new Error("CODEMODE_TEST_STORE is not set");
  return openTicketsRuntime(store, process.env.CODEMODE_TEST_NAME ?? "mcp-tasks").runtime;
}

export const mcpServerOptions = { pollIntervalMs: 200 };
