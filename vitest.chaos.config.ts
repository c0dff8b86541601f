import { tmpdir } from "node:os";
import { join } from "node:path";
import { defineConfig } from "vitest/config";
import { aliases } from "./vitest.aliases.ts";

/**
 * The chaos tests (`npm run test:chaos`): test/chaos/. Each starts its own Redis and PostgreSQL
 * servers (own ports and data folders, so it can stop and kill them) and runs the BullMQ fleet over
 * them; the fleet's child processes import the BUILT packages (run `npm run build` first). One file
 * at a time: their timings are about the fleet, the servers and the machine's two cores.
 * CODEMODE_CHAOS_RUNS sets the runs per store (default 1,000), CODEMODE_CHAOS_OUTAGES the kills
 * under submits in flight (default 20).
 */
export default defineConfig({
  resolve: { alias: aliases },
  test: {
    include: ["test/chaos/**/*.test.ts"],
    pool: "forks",
    fileParallelism: false,
    // The children reuse the compiled code of the packages they load instead of compiling it again.
    env: { NODE_COMPILE_CACHE: join(tmpdir(), "codemode-test-compile-cache") },
    // Each test sets its own timeout from its size; a server starts within the hook's.
    testTimeout: 600_000,
    hookTimeout: 120_000,
  },
});
