import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

export default defineConfig({
  resolve: {
    alias: {
      // Tests run against the sources; `npm run build` checks the published output.
      "@codemode/core": fileURLToPath(new URL("./packages/core/src/index.ts", import.meta.url)),
      // The subpath first: an alias also matches the paths below its key.
      "@codemode/storage/testing": fileURLToPath(new URL("./packages/storage/src/testing/index.ts", import.meta.url)),
      "@codemode/storage": fileURLToPath(new URL("./packages/storage/src/index.ts", import.meta.url)),
    },
  },
  test: {
    pool: "forks",
    include: ["packages/*/src/**/*.test.ts", "test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
