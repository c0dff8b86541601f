/**
 * A host for test/paused-memory.test.ts, importing the BUILT packages: pauses executions whose
 * logs are large, leaves the host idle, and reports how much heap stayed behind.
 *
 *   node --expose-gc test/memory-processes/hold.ts <sqlite file> <paused count>
 *
 * Prints one line of JSON: heap (used + external, after gc) when warm and with every execution
 * paused, in bytes, and the bytes of results each paused execution's log holds.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { createCodemodeRuntime, defineConnector } from "@codemode/core";
import { sqliteStorage } from "@codemode/storage/sqlite";

const [file, countText] = process.argv.slice(2);
const count = Number(countText);
const gc = (globalThis as { gc?: () => void }).gc;
if (!file || !Number.isSafeInteger(count) || !gc)
  throw new Error("usage: node --expose-gc hold.ts <sqlite file> <paused count>");

const RESULT_CHARS = 10_000;
const READS = 20;
const shop = defineConnector({
  name: "shop",
  tools: {
    page: {
      readOnly: true,
      execute: async (args: { n: number }) => ({ n: args.n, text: String(args.n % 10).repeat(RESULT_CHARS) }),
    },
    order: { requiresApproval: true, execute: async () => ({ ordered: true }) },
  },
});
const storage = sqliteStorage(file);
const runtime = createCodemodeRuntime({ connectors: [shop], storage, limits: { timeoutMs: 30_000 } });
const code = `async () => { let total = 0; for (let n = 0; n < ${READS}; n++) total += (await shop.page({ n })).text.length; return shop.order({ total }); }`;

async function heap(): Promise<number> {
  // Idle, as a host between requests; nothing of isolated-vm runs meanwhile.
  await sleep(200);
  for (let round = 0; round < 3; round++) gc!();
  const usage = process.memoryUsage();
  return usage.heapUsed + usage.external;
}

// Warm up: passes that pause, then approved, so every code path has run once.
for (let index = 0; index < 5; index++) {
  const paused = await runtime.execute({ code });
  if (paused.status !== "paused") throw new Error(`expected a pause, got ${paused.status}`);
  await runtime.approve({ executionId: paused.executionId });
}
const warm = await heap();
const outcomes = await Promise.all(Array.from({ length: count }, () => runtime.execute({ code })));
if (outcomes.some((outcome) => outcome.status !== "paused")) throw new Error("every execution should pause");
outcomes.length = 0;
const paused = await heap();
console.log(JSON.stringify({ warm, paused, logBytesPerExecution: READS * RESULT_CHARS }));
await runtime.close();
await storage.close();
