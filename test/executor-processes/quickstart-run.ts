/**
 * A child process for test/executors.test.ts: runs (`pause`) or approves (`approve <id>`) the shop
 * program on the SQLite file named by CODEMODE_TEST_STORE, or only lists its runs (`list`), with the
 * executor the runtime picks by itself (or CODEMODE_EXECUTOR), and prints one JSON line: the
 * outcome, what the logger said, the sandbox before any pass and the sandbox used.
 */
import { createCodemodeRuntime, defineConnector } from "@codemode/core";
import { sqliteStorage } from "@codemode/storage/sqlite";

const warnings: string[] = [];
const shop = defineConnector({
  name: "shop",
  tools: {
    search: { readOnly: true, execute: async (args: { query: string }) => [{ sku: `${args.query}-1` }] },
    order: { requiresApproval: true, execute: async (args: { sku: string }) => ({ ordered: args.sku }) },
  },
});
const storage = sqliteStorage(process.env.CODEMODE_TEST_STORE as string);
const runtime = createCodemodeRuntime({
  name: "executors",
  connectors: [shop],
  storage,
  logger: { warn: (message) => warnings.push(message) },
});
const [command, executionId] = process.argv.slice(2);
const atStart = runtime.load().sandbox;
const outcome =
  command === "list"
    ? (await runtime.executions()).items.length
    : command === "approve"
      ? await runtime.approve({ executionId: executionId as string, by: "ann" })
      : await runtime.execute({
          code: "async () => { const [mug] = await shop.search({ query: 'mug' }); return shop.order({ sku: mug.sku }); }",
        });
const { sandbox } = runtime.load();
await runtime.close();
await storage.close();
console.log(JSON.stringify({ outcome, warnings, atStart, sandbox }));
