/**
 * The config module the tests hand to `codemode --config`, written as a user would: a factory
 * returning the runtime and what closes its storage. The store comes from the environment.
 */
import { openTicketsRuntime } from "./tickets.ts";

export default function createRuntime() {
  const store = process.env.CODEMODE_TEST_STORE;
  if (!store) throw new Error("CODEMODE_TEST_STORE is not set");
  console.log("config loaded (this line must go to stderr, not into --json output)");
  return openTicketsRuntime(
    store,
    process.env.CODEMODE_TEST_NAME ?? "cli",
    Number(process.env.CODEMODE_TEST_CONNECT_MS ?? 5_000),
    Number(process.env.CODEMODE_TEST_MAX_PASSES) || undefined,
  );
}
