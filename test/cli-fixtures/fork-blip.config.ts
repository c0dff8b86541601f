/**
 * The tickets application over codemode.config.ts's store, whose store fails once more in the
 * middle of every fork's first pass, after the fork was stored (a blip): `codemode fork` must
 * still show the new fork's id, or an operator forks again and makes a duplicate.
 */
import type { CodemodeRuntime } from "@codemode/core";
import { openTicketsRuntime } from "./tickets.ts";

export default function createRuntime() {
  const store = process.env.CODEMODE_TEST_STORE;
  if (!store) throw new Error("CODEMODE_TEST_STORE is not set");
  const opened = openTicketsRuntime(store, process.env.CODEMODE_TEST_NAME ?? "cli");
  const runtime: CodemodeRuntime = {
    ...opened.runtime,
    async fork(input) {
      const made = await opened.runtime.fork(input);
      return {
        status: "error",
        executionId: made.executionId,
        code: "STORAGE_ERROR",
        error: `the store failed to write execution ${made.executionId}: connection reset`,
        calls: [],
      };
    },
  };
  return { runtime, close: opened.close };
}
