import { tmpdir } from "node:os";
import { join } from "node:path";
import { defineConfig } from "vitest/config";
import { aliases } from "./vitest.aliases.ts";

/** Pure in-process test files: no child process, no server, no global they leave changed. */
const UNIT = [
  "packages/core/src/*.test.ts",
  "packages/core/src/{adapters,connectors,log,mcp,runtime,snippets,telemetry}/**/*.test.ts",
  "packages/core/src/sandbox/pass/{event-loop-turn,parse-request}.test.ts",
  "packages/core/src/sandbox/code/*.test.ts",
  "packages/core/src/sandbox/prelude/{prelude,value-codec,sandbox-bridge}.test.ts",
  "packages/core/src/sandbox/prelude/{install-buffer-guards,install-clock,install-codemode,install-connectors,install-console,install-random,install-start}.test.ts",
  "packages/storage/src/{memory,sqlite}/*.test.ts",
  "packages/ai-sdk/src/**/*.test.ts",
  "packages/langchain/src/**/*.test.ts",
];

/**
 * Files whose bounds are about time or memory (timer lag, peak memory, freezes, exiting in the
 * middle of a teardown), run one at a time after the rest.
 */
const ALONE = [
  "test/fleet.test.ts",
  "test/fleet-hostile.test.ts",
  "test/hardening-exit.test.ts",
  "test/hardening-host.test.ts",
  "test/reading-memory.test.ts",
  "test/paused-memory.test.ts",
  "test/host-responsiveness.test.ts",
  "test/back-pressure.test.ts",
];

/**
 * The crash stories: real child processes killed and exited at every step of a run, over each
 * store, and stories that wait out a long idle window (`npm run test:slow`, which .ci/run and the
 * README's suite command run after `npm test`).
 * Each file takes 25–50 s, mostly waiting on children; apart, `npm test` stays within five minutes
 * on a 2-core machine.
 */
const SLOW = [
  "test/recover-{sqlite,redis,postgres}.test.ts",
  "test/storage-processes-{sqlite,redis,postgres}.test.ts",
  "packages/storage/src/postgres/postgres-schema.test.ts",
  // 250 paused MCP tasks, then 12 s of an idle client over memory and over Redis (about 60 s, waiting).
  "test/mcp-bounded-followers.test.ts",
];

export default defineConfig({
  resolve: { alias: aliases },
  test: {
    pool: "forks",
    // Four workers on a two-core machine (vitest's default there is one): the long files mostly
    // wait on child processes, a store or a timer, so other files run beside them (measured on
    // an idle 2-core machine: 1 worker about 650 s, 3 workers 304–315 s, 4 workers 293–295 s).
    // Files whose bounds are about time or memory run alone (the "alone" project, after the rest).
    maxWorkers: 4,
    reporters: ["default", "./test/slowest-files-reporter.ts"],
    // The many child processes the tests start (CLI runs, workers, crash and exit tries) reuse
    // the compiled code of the packages they load instead of compiling it again each time.
    env: { NODE_COMPILE_CACHE: join(tmpdir(), "codemode-test-compile-cache") },
    testTimeout: 30_000,
    hookTimeout: 30_000,
    projects: [
      {
        extends: true,
        test: {
          name: "unit",
          // In-process files that leave no global state behind: one module graph per worker
          // instead of one per file (a fresh fork costs about a third of a second).
          isolate: false,
          include: UNIT,
          // Type-level tests (*.test-d.ts) are checked by tsc, not run: `npm test` runs both.
          typecheck: {
            enabled: true,
            // The repo's TypeScript 7 CLI: vitest only spawns it and reads its diagnostics, no JS API needed.
            checker: "tsc",
            include: ["packages/*/src/**/*.test-d.ts"],
            tsconfig: "./tsconfig.typetests.json",
          },
        },
      },
      {
        extends: true,
        test: {
          name: "isolated",
          include: ["packages/*/src/**/*.test.ts", "test/**/*.test.ts"],
          exclude: [...UNIT, ...ALONE, ...SLOW, "test/containment/**", "test/chaos/**", "**/node_modules/**"],
        },
      },
      {
        extends: true,
        test: { name: "slow", include: SLOW },
      },
      {
        extends: true,
        test: {
          name: "alone",
          include: ALONE,
          // After the others, one file at a time: their bounds are about time and memory.
          sequence: { groupOrder: 1 },
          fileParallelism: false,
        },
      },
    ],
  },
});
