/**
 * One store's run of the memory benchmark, in a process of its own so that its RSS belongs to
 * nothing else: `node --expose-gc bench/memory-child.ts <memory|sqlite|redis> [where]`, where
 * `where` is the SQLite file or the Redis namespace (bench/memory.bench.ts spawns it and removes
 * what it wrote afterwards). Prints one line of JSON, a `MemoryReport`.
 *
 * The story: a warm runtime; 100 executions started at once, each running until it pauses on a
 * `requiresApproval` tool; 900 more; then every one of them approved or rejected and pruned.
 * Memory is read after `gc()` between the steps, and sampled while the 100 run. At 100 and at
 * 1,000 paused it is read twice: with the host idle since the last pause, and again after one
 * more (read-only) execution ran a pass, since isolated-vm lets go of the host functions of
 * disposed isolates only when it next runs something on this thread. Passes run on this thread
 * (`sandboxHost: "inline"`).
 */
import { resourceUsage } from "node:process";
import { setTimeout as sleep } from "node:timers/promises";
import { type CodemodeRuntime, createCodemodeRuntime, defineConnector } from "@codemode/core";
import type { CodemodeStorage } from "@codemode/storage";
import { memoryStorage } from "@codemode/storage/memory";
import { redisStorage } from "@codemode/storage/redis";
import { sqliteStorage } from "@codemode/storage/sqlite";

export type StoreKind = "memory" | "sqlite" | "redis";

/** Bytes, as `process.memoryUsage()` gives them, read after `gc()`. */
export interface MemorySnapshot {
  rss: number;
  heapUsed: number;
  external: number;
}

export interface MemoryReport {
  /** Executions started at once, then paused executions in all. */
  firstWave: number;
  totalPaused: number;
  /** How often RSS was sampled while the first wave ran, in ms. */
  sampleMs: number;
  /** The runtime created and warmed, nothing paused. */
  warm: MemorySnapshot;
  /** Highest RSS sampled every `SAMPLE_MS` while the first 100 ran until they paused. */
  peakRssSampled: number;
  /** `resourceUsage().maxRSS` (the kernel's high-water mark) right after the 100 paused, in bytes. */
  peakRssKernel: number;
  paused100: MemorySnapshot;
  /** Right after `paused100`, once one more (read-only) execution has run a pass. */
  paused100AfterPass: MemorySnapshot;
  paused1000: MemorySnapshot;
  paused1000AfterPass: MemorySnapshot;
  /** Every paused execution approved or rejected, then pruned. */
  decided: MemorySnapshot;
  /** Memory store only: characters of the keys and values it holds (one byte each), at 100 and at 1,000 paused. */
  storedChars100?: number;
  storedChars1000?: number;
}

const FIRST_WAVE = 100;
const TOTAL_PAUSED = 1_000;
const SAMPLE_MS = 2;
const RUNTIME_NAME = "bench";
/** Executions in flight while deciding: each approval runs a pass. */
const DECIDE_IN_FLIGHT = 10;
const REDIS_URL = process.env.CODEMODE_REDIS_URL ?? "redis://127.0.0.1:6379";

const PAUSE_CODE = "async () => shop.order({ sku: 'SKU-1' })";
const READ_CODE = "async () => shop.read({})";

const shop = defineConnector({
  name: "shop",
  tools: {
    read: { execute: async () => ({ sku: "SKU-1", title: "Analytical Engine", available: 17 }) },
    order: { requiresApproval: true, execute: async () => ({ ok: true }) },
  },
});

function openStorage(kind: StoreKind, where: string | undefined): CodemodeStorage {
  if (kind === "memory") return memoryStorage();
  if (!where) throw new Error(`the ${kind} store needs a place: a SQLite file or a Redis namespace`);
  return kind === "sqlite" ? sqliteStorage(where) : redisStorage(REDIS_URL, { namespace: where });
}

/** Memory after the isolates of finished passes are torn down and a full collection ran. */
async function settled(): Promise<MemorySnapshot> {
  // Isolates are disposed on a later turn of the event loop, and torn down by isolated-vm after that.
  await sleep(200);
  for (let round = 0; round < 4; round++) {
    globalThis.gc?.();
    await new Promise((resolve) => setImmediate(resolve));
  }
  const { rss, heapUsed, external } = process.memoryUsage();
  return { rss, heapUsed, external };
}

/** Starts sampling RSS; the returned function stops and gives the highest sample. */
function sampleRss(): () => number {
  let highest = process.memoryUsage.rss();
  const timer = setInterval(() => {
    highest = Math.max(highest, process.memoryUsage.rss());
  }, SAMPLE_MS);
  return () => {
    clearInterval(timer);
    return Math.max(highest, process.memoryUsage.rss());
  };
}

/** Starts `count` executions at once and waits until each has paused; keeps none of their outcomes. */
async function pauseAtOnce(runtime: CodemodeRuntime, count: number): Promise<void> {
  const statuses = await Promise.all(
    Array.from({ length: count }, async () => (await runtime.execute({ code: PAUSE_CODE })).status),
  );
  const notPaused = statuses.filter((status) => status !== "paused");
  if (notPaused.length > 0)
    throw new Error(`${notPaused.length} of ${count} executions did not pause: ${notPaused.slice(0, 5).join(", ")}`);
}

/**
 * Approves every other pending action and rejects the rest, a page at a time, found through
 * `pending()` as an approval inbox would find them (no id is kept in between).
 */
async function decideAll(runtime: CodemodeRuntime): Promise<number> {
  let decided = 0;
  for (;;) {
    const page = await runtime.pending({ limit: 100 });
    if (page.items.length === 0) return decided;
    let next = 0;
    const worker = async () => {
      while (next < page.items.length) {
        const position = next++;
        const action = page.items[position]!;
        if ((decided + position) % 2 === 0) {
          const outcome = await runtime.approve({ executionId: action.executionId, seq: action.seq });
          if (outcome.status !== "completed") throw new Error(`an approved execution ended ${outcome.status}`);
        } else if (!(await runtime.reject({ executionId: action.executionId, seq: action.seq, reason: "benchmark" }))) {
          throw new Error(`action ${action.seq} of ${action.executionId} could not be rejected`);
        }
      }
    };
    await Promise.all(Array.from({ length: DECIDE_IN_FLIGHT }, worker));
    decided += page.items.length;
  }
}

/** Deletes every terminal execution (at most 100 go per call). */
async function pruneAll(runtime: CodemodeRuntime): Promise<void> {
  while ((await runtime.pruneExecutions(0)) > 0) {
    // Next batch.
  }
}

async function pausedCount(storage: CodemodeStorage): Promise<number> {
  return storage.index.forRuntime(RUNTIME_NAME).count(["paused"]);
}

/**
 * Characters of the keys and values the memory store holds: what its entries take, give or take
 * V8's string headers. Reads the store's private map: a measurement, not an API.
 */
function storedChars(storage: CodemodeStorage): number {
  const data = (storage.keyv.store as { data?: Map<string, unknown> }).data;
  if (!(data instanceof Map)) throw new Error("the memory store's map was not found");
  let chars = 0;
  for (const [key, value] of data)
    chars += key.length + (typeof value === "string" ? value.length : JSON.stringify(value).length);
  return chars;
}

/** Runs one read-only execution, then reads memory. */
async function settledAfterOnePass(runtime: CodemodeRuntime): Promise<MemorySnapshot> {
  const read = await runtime.execute({ code: READ_CODE });
  if (read.status !== "completed") throw new Error(`the read-only execution ended ${read.status}`);
  return settled();
}

async function warmUp(runtime: CodemodeRuntime): Promise<void> {
  for (let round = 0; round < 5; round++) {
    const read = await runtime.execute({ code: READ_CODE });
    if (read.status !== "completed") throw new Error(`the warm-up read ended ${read.status}`);
  }
  await pauseAtOnce(runtime, 10);
  await decideAll(runtime);
  await pruneAll(runtime);
}

async function measure(kind: StoreKind, where: string | undefined): Promise<MemoryReport> {
  if (typeof globalThis.gc !== "function") throw new Error("run with node --expose-gc");
  const storage = openStorage(kind, where);
  const runtime = createCodemodeRuntime({
    name: RUNTIME_NAME,
    connectors: [shop],
    storage,
    maxExecutions: 20,
    logger: { warn() {} },
    // The runtime's own thread, as before sandbox processes became the default: RSS is this process's alone.
    sandboxHost: "inline",
  });
  try {
    await warmUp(runtime);
    const warm = await settled();

    const stopSampling = sampleRss();
    await pauseAtOnce(runtime, FIRST_WAVE);
    const peakRssSampled = stopSampling();
    const peakRssKernel = resourceUsage().maxRSS * 1024;
    const paused100 = await settled();
    const storedChars100 = kind === "memory" ? storedChars(storage) : undefined;
    const paused100AfterPass = await settledAfterOnePass(runtime);

    for (let started = FIRST_WAVE; started < TOTAL_PAUSED; started += FIRST_WAVE)
      await pauseAtOnce(runtime, FIRST_WAVE);
    const paused1000 = await settled();
    const storedChars1000 = kind === "memory" ? storedChars(storage) : undefined;
    const paused1000AfterPass = await settledAfterOnePass(runtime);
    const paused = await pausedCount(storage);
    if (paused !== TOTAL_PAUSED) throw new Error(`${paused} executions are paused, expected ${TOTAL_PAUSED}`);

    const decidedCount = await decideAll(runtime);
    if (decidedCount !== TOTAL_PAUSED)
      throw new Error(`decided ${decidedCount} pending actions, expected ${TOTAL_PAUSED}`);
    await pruneAll(runtime);
    const left = (await runtime.executions({ limit: 10 })).items.length;
    if (left !== 0) throw new Error(`${left} executions left after pruning`);
    const decided = await settled();
    return {
      firstWave: FIRST_WAVE,
      totalPaused: TOTAL_PAUSED,
      sampleMs: SAMPLE_MS,
      warm,
      peakRssSampled,
      peakRssKernel,
      paused100,
      paused100AfterPass,
      paused1000,
      paused1000AfterPass,
      decided,
      ...(storedChars100 === undefined ? {} : { storedChars100, storedChars1000 }),
    };
  } finally {
    await runtime.close();
    await storage.close();
  }
}

const [kind, where] = process.argv.slice(2);
if (kind !== "memory" && kind !== "sqlite" && kind !== "redis")
  throw new Error(`usage: node --expose-gc bench/memory-child.ts <memory|sqlite|redis> [where]`);
console.log(JSON.stringify(await measure(kind, where)));
