import { fileURLToPath } from "node:url";

const source = (path: string) => fileURLToPath(new URL(path, import.meta.url));

/**
 * The packages' import paths, pointed at their sources, for every vitest config of the repository
 * (the suite, the containment corpus, the chaos test): tests run against the sources; `npm run
 * build` checks the published output. Subpaths come first: an alias also matches the paths below
 * its key.
 */
export const aliases = [
  { find: /^@codemode\/core\/(adapters|sandbox|openapi)$/, replacement: source("./packages/core/src/$1/index.ts") },
  { find: /^@codemode\/core\/operations$/, replacement: source("./packages/core/src/operations.ts") },
  { find: /^@codemode\/core\/store$/, replacement: source("./packages/core/src/log/index.ts") },
  { find: /^@codemode\/core\/mcp$/, replacement: source("./packages/core/src/mcp/index.ts") },
  { find: /^@codemode\/core\/telemetry$/, replacement: source("./packages/core/src/telemetry/index.ts") },
  { find: /^@codemode\/core$/, replacement: source("./packages/core/src/index.ts") },
  {
    find: /^@codemode\/storage\/(redis|postgres|sqlite|memory|testing)$/,
    replacement: source("./packages/storage/src/$1/index.ts"),
  },
  { find: /^@codemode\/storage$/, replacement: source("./packages/storage/src/index.ts") },
  { find: /^@codemode\/bullmq$/, replacement: source("./packages/bullmq/src/index.ts") },
  { find: /^@codemode\/ai-sdk$/, replacement: source("./packages/ai-sdk/src/index.ts") },
  { find: /^@codemode\/langchain\/middleware$/, replacement: source("./packages/langchain/src/middleware.ts") },
  { find: /^@codemode\/langchain$/, replacement: source("./packages/langchain/src/index.ts") },
  { find: /^@codemode\/cli\/inbox$/, replacement: source("./packages/cli/src/inbox/index.ts") },
  { find: /^@codemode\/cli$/, replacement: source("./packages/cli/src/index.ts") },
];
