/**
 * Runtime cost against history, on every store (R-RT-4: no key or lock shared by all
 * executions, a listing page costs O(page)).
 *
 * For each store (memory, SQLite, Redis, PostgreSQL) it opens four storages kept apart (their
 * own file, namespace or tables) and seeds them, through `runtime.execute` of a program that
 * pauses at once on a `requiresApproval` tool, with 0, 100, 1,000 and 10,000 paused executions.
 * Then, interleaved across the storages of one store:
 *
 * 1. `execute` of a one-read program with 0, 1,000 and 10,000 paused executions stored;
 * 2. a page of 50 from `executions()` and `pending()` with 100 and 10,000 stored;
 * 3. executions per second with 1 and with 16 in flight (on the storage holding 10,000), and on
 *    memory and Redis also with 2, 4 and 8, with passes run from the runtime's thread
 *    (`sandboxHost: "inline"`) and on two sandbox threads (`sandboxHost: "thread"`,
 *    `sandboxThreads: 2`). Every runtime here pins its host, so the rows measure what they did
 *    before sandbox processes became the default (bench/hosts.bench.ts measures each host).
 *
 * Rows of 1. and 3. are points of the "store size" and "concurrency" plots (one line per store).
 *
 * A store that cannot be reached gives one row saying so. Everything written is removed
 * afterwards (SQLite files, Redis keys, PostgreSQL tables). Redis at $CODEMODE_REDIS_URL
 * (default redis://127.0.0.1:6379), PostgreSQL at $CODEMODE_POSTGRES_URL (default
 * postgresql://postgres@127.0.0.1:5432/test).
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { type CodemodeRuntime, createCodemodeRuntime, defineConnector } from "@codemode/core";
import type { CodemodeStorage } from "@codemode/storage";
import { memoryStorage } from "@codemode/storage/memory";
import { postgresStorage } from "@codemode/storage/postgres";
import { redisStorage } from "@codemode/storage/redis";
import { sqliteStorage } from "@codemode/storage/sqlite";
import { tcpUnreachable } from "@codemode/storage/testing";
import { createClient } from "@keyv/redis";
import pg from "pg";
import { type Benchmark, type BenchRow, check, sampleInterleaved, stats } from "./harness.ts";

const REDIS_URL = process.env.CODEMODE_REDIS_URL ?? "redis://127.0.0.1:6379";
const POSTGRES_URL = process.env.CODEMODE_POSTGRES_URL ?? "postgresql://postgres@127.0.0.1:5432/test";

/** Paused executions each storage of a store holds before anything is measured. */
const HISTORIES = { none: 0, hundred: 100, thousand: 1_000, tenThousand: 10_000 } as const;
type History = keyof typeof HISTORIES;
/** A history's part of file, namespace and table names: lower case, as PostgreSQL folds unquoted names. */
const slug = (history: History) => `h${HISTORIES[history]}`;

/**
 * Executions in flight while seeding. Seeding is bound by this process's main thread (isolate
 * creation), so more does not help, except on PostgreSQL, where each waits on commits.
 */
const SEED_IN_FLIGHT = 16;
const POSTGRES_SEED_IN_FLIGHT = 32;
/** Executions in flight in the throughput row with the target (against 1 in flight). */
const THROUGHPUT_IN_FLIGHT = 16;
/** The throughput curve, on the stores with a throughput target. */
const IN_FLIGHT_CURVE = [1, 2, 4, 8, 16];
/** Sandbox threads of the threaded throughput rows (one per core of the machines measured). */
const SANDBOX_THREADS = 2;
/** Executions per throughput round; four rounds at each number in flight, interleaved (the rate is over all four). */
const THROUGHPUT_ROUND = 100;
const THROUGHPUT_ROUNDS = 4;
const PAGE = 50;
const RUNTIME_NAME = "bench";
/** As the runtime bench: retention keeps a few completed runs; paused ones are never pruned. */
const MAX_EXECUTIONS = 20;

const READ_CODE = "async () => shop.read({})";
const PAUSE_CODE = "async () => shop.order({ sku: 'SKU-1' })";

const shop = defineConnector({
  name: "shop",
  tools: {
    read: { execute: async () => ({ sku: "SKU-1", title: "Analytical Engine", available: 17 }) },
    order: { requiresApproval: true, execute: async () => ({ ok: true }) },
  },
});

/** One store: how to reach it, how to open a storage of its own per history, how to remove them. */
interface StoreUnderTest {
  label: string;
  /** Whether the store has the throughput target: measured also with sandbox threads. */
  throughputTarget?: boolean;
  /** Numbers of executions in flight measured (1 and THROUGHPUT_IN_FLIGHT at least). */
  inFlight: number[];
  seedInFlight: number;
  /** Why the store cannot be reached, or undefined. */
  unreachable(): Promise<string | undefined>;
  open(history: History): CodemodeStorage;
  /** Removes everything the storages wrote; called after they are closed. */
  cleanUp(): Promise<void>;
}

function memory(): StoreUnderTest {
  return {
    label: "memory",
    throughputTarget: true,
    inFlight: IN_FLIGHT_CURVE,
    seedInFlight: SEED_IN_FLIGHT,
    unreachable: async () => undefined,
    open: () => memoryStorage(),
    cleanUp: async () => undefined,
  };
}

function sqlite(): StoreUnderTest {
  let folder: string | undefined;
  return {
    label: "SQLite",
    inFlight: [1, THROUGHPUT_IN_FLIGHT],
    seedInFlight: SEED_IN_FLIGHT,
    unreachable: async () => undefined,
    open(history) {
      folder ??= mkdtempSync(join(tmpdir(), "codemode-bench-stores-"));
      return sqliteStorage(join(folder, `${slug(history)}.sqlite`));
    },
    async cleanUp() {
      if (folder) rmSync(folder, { recursive: true, force: true });
    },
  };
}

function redis(): StoreUnderTest {
  const prefix = `codemode-bench-stores-${randomUUID().slice(0, 8)}`;
  return {
    label: "Redis",
    throughputTarget: true,
    inFlight: IN_FLIGHT_CURVE,
    seedInFlight: SEED_IN_FLIGHT,
    unreachable: () => tcpUnreachable(REDIS_URL),
    open: (history) => redisStorage(REDIS_URL, { namespace: `${prefix}-${slug(history)}` }),
    async cleanUp() {
      const client = createClient({ url: REDIS_URL });
      await client.connect();
      try {
        const keys = await client.keys(`${prefix}-*`);
        for (let start = 0; start < keys.length; start += 1_000) await client.del(keys.slice(start, start + 1_000));
      } finally {
        await client.close();
      }
    },
  };
}

function postgres(): StoreUnderTest {
  const prefix = `codemode_bench_${randomUUID().slice(0, 8)}`;
  const tables = (history: History) => ({
    table: `${prefix}_${slug(history)}_store`,
    leaseTable: `${prefix}_${slug(history)}_leases`,
    indexTable: `${prefix}_${slug(history)}_executions`,
  });
  return {
    label: "PostgreSQL",
    inFlight: [1, THROUGHPUT_IN_FLIGHT],
    seedInFlight: POSTGRES_SEED_IN_FLIGHT,
    unreachable: () => tcpUnreachable(POSTGRES_URL),
    // A connection per execution in flight, so 16 (and 32 seeding) do not queue for 10.
    open: (history) => postgresStorage(POSTGRES_URL, { namespace: prefix, ...tables(history), pool: { max: 20 } }),
    async cleanUp() {
      const client = new pg.Client({ connectionString: POSTGRES_URL });
      await client.connect();
      try {
        const names = (Object.keys(HISTORIES) as History[]).flatMap((history) => Object.values(tables(history)));
        await client.query(`DROP TABLE IF EXISTS ${names.map((name) => `"${name}"`).join(", ")}`);
      } finally {
        await client.end();
      }
    },
  };
}

interface Opened {
  storage: CodemodeStorage;
  runtime: CodemodeRuntime;
}

async function measureStore(store: StoreUnderTest): Promise<BenchRow[]> {
  const reason = await store.unreachable();
  if (reason !== undefined) {
    return [
      {
        benchmark: `history and concurrency (${store.label})`,
        subject: `not measured: ${reason}`,
        unit: "ms",
        median: Number.NaN,
      },
    ];
  }
  const opened = {} as Record<History, Opened>;
  try {
    for (const history of Object.keys(HISTORIES) as History[]) {
      const storage = store.open(history);
      opened[history] = {
        storage,
        runtime: createCodemodeRuntime({
          name: RUNTIME_NAME,
          connectors: [shop],
          storage,
          maxExecutions: MAX_EXECUTIONS,
          sandboxHost: "inline",
        }),
      };
    }
    const seedRows = await seedAll(store, opened);
    // Listing first, while the storages hold only the paused executions they were seeded with.
    const listingRows = await listing(store.label, opened);
    const executeRows = await executeByHistory(store.label, opened);
    const throughputRows = await throughput(store, opened.tenThousand.runtime, 0);
    if (store.throughputTarget) {
      // The same storage, run otherwise: each runtime is closed once its rows are measured.
      const sameStorage = (options: Partial<Parameters<typeof createCodemodeRuntime>[0]>) =>
        createCodemodeRuntime({
          name: RUNTIME_NAME,
          connectors: [shop],
          storage: opened.tenThousand.storage,
          maxExecutions: MAX_EXECUTIONS,
          sandboxHost: "inline",
          ...options,
        });
      // A fresh isolate per pass: what warm isolates (the default) gain at saturation.
      const fresh = sameStorage({ isolateReuse: false });
      try {
        throughputRows.push(...(await saturation(store, opened.tenThousand.runtime, fresh)));
      } finally {
        await fresh.close();
      }
      // Passes on sandbox threads.
      const threaded = sameStorage({ sandboxHost: "thread", sandboxThreads: SANDBOX_THREADS });
      try {
        await inFlight(THROUGHPUT_ROUND, THROUGHPUT_IN_FLIGHT, readOnce(threaded));
        throughputRows.push(...(await throughput(store, threaded, SANDBOX_THREADS)));
      } finally {
        await threaded.close();
      }
    }
    for (const history of Object.keys(HISTORIES) as History[]) {
      const paused = await pausedCount(opened[history].storage);
      check(
        paused === HISTORIES[history],
        `${store.label}: ${paused} paused executions left in the "${history}" storage, expected ${HISTORIES[history]}`,
      );
    }
    return [...executeRows, ...throughputRows, ...listingRows, ...seedRows];
  } finally {
    // Closed whatever happened, so that the clean-up runs even after a failed close.
    await Promise.allSettled(
      Object.values(opened).map(async ({ runtime, storage }) => {
        await runtime.close();
        await storage.close();
      }),
    );
    await store.cleanUp();
  }
}

/** Seeds every storage with its paused executions; reports the rate of the largest seeding. */
async function seedAll(store: StoreUnderTest, opened: Record<History, Opened>): Promise<BenchRow[]> {
  const label = store.label;
  const seed = (runtime: CodemodeRuntime) => async () => {
    const outcome = await runtime.execute({ code: PAUSE_CODE });
    check(
      outcome.status === "paused",
      `${label}: the seeding program did not pause: ${JSON.stringify(outcome).slice(0, 300)}`,
    );
  };
  let rate = 0;
  for (const history of Object.keys(HISTORIES) as History[]) {
    const count = HISTORIES[history];
    const started = performance.now();
    await inFlight(count, store.seedInFlight, seed(opened[history].runtime));
    if (history === "tenThousand") rate = (count / (performance.now() - started)) * 1_000;
    const paused = await pausedCount(opened[history].storage);
    check(paused === count, `${label}: seeded ${count} paused executions into "${history}", the index lists ${paused}`);
  }
  const benchmark = `seeding: runtime.execute of a program that pauses at once (${label})`;
  return [
    {
      benchmark,
      subject: `10,000 paused executions, ${store.seedInFlight} in flight`,
      unit: "/s",
      median: rate,
      samples: HISTORIES.tenThousand,
    },
  ];
}

/** 1. `execute` of a one-read program, with 0, 1,000 and 10,000 paused executions stored. */
async function executeByHistory(label: string, opened: Record<History, Opened>): Promise<BenchRow[]> {
  const samples = await sampleInterleaved(
    {
      none: readOnce(opened.none.runtime),
      thousand: readOnce(opened.thousand.runtime),
      tenThousand: readOnce(opened.tenThousand.runtime),
    },
    { warmup: 10, iterations: 60 },
  );
  const none = stats(samples.none);
  const thousand = stats(samples.thousand);
  const tenThousand = stats(samples.tenThousand);
  const benchmark = `execute of a one-read program, by paused executions stored (${label})`;
  const series = (stored: number) => ({
    name: "store size",
    x: stored,
    xLabel: "paused executions stored",
    yLabel: "execute of a one-read program (ms)",
    line: label,
  });
  return [
    {
      benchmark,
      subject: "0 paused stored",
      unit: "ms",
      median: none.median,
      p90: none.p90,
      samples: none.n,
      series: series(0),
    },
    {
      benchmark,
      subject: "1,000 paused stored",
      unit: "ms",
      median: thousand.median,
      p90: thousand.p90,
      ratio: thousand.median / none.median,
      versus: "0 stored",
      samples: thousand.n,
      series: series(1_000),
    },
    {
      benchmark,
      subject: "10,000 paused stored",
      unit: "ms",
      median: tenThousand.median,
      p90: tenThousand.p90,
      ratio: tenThousand.median / none.median,
      versus: "0 stored",
      target: "10,000 / 0 ≤ 1.2×",
      samples: tenThousand.n,
      series: series(10_000),
    },
  ];
}

/** 2. A page of 50 from `executions()` and `pending()`, with 100 and 10,000 stored. */
async function listing(label: string, opened: Record<History, Opened>): Promise<BenchRow[]> {
  const executions = (runtime: CodemodeRuntime) => async () => {
    const page = await runtime.executions({ limit: PAGE });
    check(
      page.items.length === PAGE && page.cursor !== undefined,
      `${label}: executions() gave ${page.items.length} items`,
    );
  };
  const pending = (runtime: CodemodeRuntime) => async () => {
    const page = await runtime.pending({ limit: PAGE });
    check(
      page.items.length === PAGE && page.cursor !== undefined,
      `${label}: pending() gave ${page.items.length} items`,
    );
  };
  const samples = await sampleInterleaved(
    {
      executionsHundred: executions(opened.hundred.runtime),
      executionsTenThousand: executions(opened.tenThousand.runtime),
      pendingHundred: pending(opened.hundred.runtime),
      pendingTenThousand: pending(opened.tenThousand.runtime),
    },
    { warmup: 10, iterations: 80 },
  );
  const benchmark = `a listing page of ${PAGE}, by executions stored (${label})`;
  const pair = (name: string, hundred: number[], tenThousand: number[]): BenchRow[] => {
    const small = stats(hundred);
    const large = stats(tenThousand);
    return [
      { benchmark, subject: `${name}, 100 stored`, unit: "ms", median: small.median, p90: small.p90, samples: small.n },
      {
        benchmark,
        subject: `${name}, 10,000 stored`,
        unit: "ms",
        median: large.median,
        p90: large.p90,
        ratio: large.median / small.median,
        versus: "100 stored",
        target: "≈ 1×: O(page)",
        samples: large.n,
      },
    ];
  };
  return [
    ...pair(`executions({ limit: ${PAGE} })`, samples.executionsHundred, samples.executionsTenThousand),
    ...pair(`pending({ limit: ${PAGE} })`, samples.pendingHundred, samples.pendingTenThousand),
  ];
}

/**
 * 3. Executions per second of the one-read program by the number in flight, in one process, with
 * passes run from the runtime's thread (`threads` 0) or on that many sandbox threads.
 */
async function throughput(store: StoreUnderTest, runtime: CodemodeRuntime, threads: number): Promise<BenchRow[]> {
  const run = readOnce(runtime);
  const samples = await sampleInterleaved(
    Object.fromEntries(store.inFlight.map((limit) => [String(limit), () => inFlight(THROUGHPUT_ROUND, limit, run)])),
    // The runtime is warm: it has just run the execute samples (or the warm-up round above).
    { warmup: 0, iterations: THROUGHPUT_ROUNDS },
  );
  // The rate over all rounds (executions / total seconds); its slow end is the slowest round.
  const rate = (milliseconds: number[]) => {
    const total = milliseconds.reduce((sum, elapsed) => sum + elapsed, 0);
    return {
      overall: ((THROUGHPUT_ROUND * milliseconds.length) / total) * 1_000,
      slowest: (THROUGHPUT_ROUND / Math.max(...milliseconds)) * 1_000,
      n: THROUGHPUT_ROUND * milliseconds.length,
    };
  };
  const serial = rate(samples["1"]!);
  const where = threads === 0 ? "passes on the runtime's thread" : `sandboxThreads: ${threads}`;
  const benchmark = `throughput of one-read executions, 10,000 paused stored (${store.label}, ${where})`;
  // The target is for the threaded rows; from one thread, creating isolates bounds it (docs/performance.md).
  const target = threads === 0 ? "— (one thread: see docs/performance.md)" : "≥ 1.5× on 2 cores (memory, Redis)";
  return store.inFlight.map((limit): BenchRow => {
    const measured = rate(samples[String(limit)]!);
    return {
      benchmark,
      subject: `${limit} in flight`,
      unit: "/s",
      median: measured.overall,
      p90: measured.slowest,
      ...(limit === 1 ? {} : { ratio: measured.overall / serial.overall, versus: "1 in flight" }),
      ...(limit === THROUGHPUT_IN_FLIGHT && store.throughputTarget ? { target } : {}),
      samples: measured.n,
      series: {
        name: "concurrency",
        x: limit,
        xLabel: "executions in flight",
        yLabel: "one-read executions per second",
        line: threads === 0 ? store.label : `${store.label}, ${threads} sandbox threads`,
      },
    };
  });
}

/**
 * Executions per second at saturation (THROUGHPUT_IN_FLIGHT in flight, passes on the runtime's
 * thread), warm isolates (the default) against a fresh isolate per pass, interleaved rounds.
 */
async function saturation(store: StoreUnderTest, warm: CodemodeRuntime, fresh: CodemodeRuntime): Promise<BenchRow[]> {
  const samples = await sampleInterleaved(
    {
      warm: () => inFlight(THROUGHPUT_ROUND, THROUGHPUT_IN_FLIGHT, readOnce(warm)),
      fresh: () => inFlight(THROUGHPUT_ROUND, THROUGHPUT_IN_FLIGHT, readOnce(fresh)),
    },
    { warmup: 1, iterations: THROUGHPUT_ROUNDS },
  );
  const rate = (milliseconds: number[]) =>
    ((THROUGHPUT_ROUND * milliseconds.length) / milliseconds.reduce((sum, elapsed) => sum + elapsed, 0)) * 1_000;
  const benchmark = `executions per second at saturation, ${THROUGHPUT_IN_FLIGHT} in flight, one thread (${store.label}, 10,000 paused stored)`;
  const freshRate = rate(samples.fresh);
  const warmRate = rate(samples.warm);
  const n = THROUGHPUT_ROUND * THROUGHPUT_ROUNDS;
  return [
    {
      benchmark,
      subject: "F: a fresh isolate per pass (isolateReuse: false)",
      unit: "/s",
      median: freshRate,
      samples: n,
    },
    {
      benchmark,
      subject: "warm isolates, a fresh context per pass (the default of the inline host)",
      unit: "/s",
      median: warmRate,
      ratio: warmRate / freshRate,
      versus: "F",
      target: "≥ 2× F",
      samples: n,
    },
  ];
}

function readOnce(runtime: CodemodeRuntime): () => Promise<void> {
  return async () => {
    const outcome = await runtime.execute({ code: READ_CODE });
    const sku = outcome.status === "completed" ? (outcome.result as { sku?: unknown } | null)?.sku : undefined;
    check(sku === "SKU-1", `the one-read program did not return its item: ${JSON.stringify(outcome).slice(0, 300)}`);
  };
}

/** Runs `task` `count` times with at most `limit` runs in flight at once. */
async function inFlight(count: number, limit: number, task: () => Promise<void>): Promise<void> {
  let started = 0;
  const worker = async () => {
    while (started < count) {
      started += 1;
      await task();
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, count) }, worker));
}

async function pausedCount(storage: CodemodeStorage): Promise<number> {
  return storage.index.forRuntime(RUNTIME_NAME).count(["paused"]);
}

export const storesBenchmark: Benchmark = {
  name: "stores",
  description:
    "every store: execute and listing cost with 0 to 10,000 paused executions stored, throughput by executions in flight (1 to 16)",
  async run() {
    const rows: BenchRow[] = [];
    for (const store of [memory(), sqlite(), redis(), postgres()]) rows.push(...(await measureStore(store)));
    return rows;
  },
};
