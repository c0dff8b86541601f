import { tmpdir } from "node:os";
import { join } from "node:path";
import { defineConfig } from "vitest/config";
import { aliases } from "./vitest.aliases.ts";

/**
 * The hostile-program corpus on both engines and every host (`npm run test:containment`, R-SB-8):
 * test/containment/. Its cases run in child processes that import the BUILT packages (run
 * `npm run build` first); each file runs its children a few at a time (CONTAINMENT_WIDTH), and
 * the files run one after another, so that one file's children do not make another's late.
 */
export default defineConfig({
  resolve: { alias: aliases },
  test: {
    include: ["test/containment/**/*.test.ts"],
    pool: "forks",
    fileParallelism: false,
    // The children reuse the compiled code of the packages they load instead of compiling it again.
    env: { NODE_COMPILE_CACHE: join(tmpdir(), "codemode-test-compile-cache") },
    // Each file runs its whole corpus in a beforeAll; the tests then read what it measured.
    testTimeout: 60_000,
    hookTimeout: 900_000,
  },
});
