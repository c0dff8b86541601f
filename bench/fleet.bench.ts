/**
 * The fleet (`@codemode/bullmq` on Redis): executions per second with 1, 2 and 4 worker
 * processes, and the latency from `queue.submit` to the outcome a web process sees through
 * `queue.waitForOutcome`. A figure, not a target: it depends on how many cores the workers get
 * (this machine has 2, shared with Redis and this process).
 *
 * Each run is three connector calls of a tool that answers at once, so what is measured is the
 * fleet's own cost: the submission (store + job), BullMQ's hand-over, the pass (isolate, log
 * writes, lease) and the event back. Per worker count: a warm-up, then three bursts of 150 runs
 * submitted at once (executions/s: runs / (last outcome − first submit)), then 100 runs in a
 * closed loop with two per worker in flight (latency median and p95). Workers are child
 * processes of this file (`node bench/fleet.bench.ts --worker <config>`), concurrency 4, each
 * running its passes on its own thread (`sandboxHost: "inline"`, as before sandbox processes
 * became the default: four workers would otherwise start eight sandbox processes on two cores).
 *
 * Needs Redis at $CODEMODE_REDIS_URL (default redis://127.0.0.1:6379); everything it writes is
 * deleted afterwards.
 */
import { type ChildProcess, fork } from "node:child_process";
import { randomUUID } from "node:crypto";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { type CodemodeQueue, createCodemodeQueue, createCodemodeWorker } from "@codemode/bullmq";
import { createCodemodeRuntime, defineConnector } from "@codemode/core";
import { redisStorage } from "@codemode/storage/redis";
import { tcpUnreachable } from "@codemode/storage/testing";
import { createClient } from "@keyv/redis";
import { type Benchmark, type BenchRow, check, percentile } from "./harness.ts";

const REDIS_URL = process.env.CODEMODE_REDIS_URL ?? "redis://127.0.0.1:6379";
const WORKER_COUNTS = [1, 2, 4];
const CONCURRENCY = 4;
const BURST = 150;
const BURSTS = 3;
const LATENCY_RUNS = 100;
const PROGRAM =
  "async () => { const a = await bench.read({ i: 1 }); const b = await bench.read({ i: 2 }); return (await bench.write({ sum: a.i + b.i })).sum; }";

interface WorkerConfig {
  space: string;
}

function openRuntime(space: string) {
  const bench = defineConnector({
    name: "bench",
    tools: {
      read: { execute: async (args: { i: number }) => ({ i: args.i }) },
      write: { execute: async (args: { sum: number }) => ({ sum: args.sum }) },
    },
  });
  const storage = redisStorage(REDIS_URL, { namespace: space });
  return {
    storage,
    runtime: createCodemodeRuntime({
      connectors: [bench],
      storage,
      maxExecutions: 100_000,
      logger: { warn() {} },
      sandboxHost: "inline",
    }),
  };
}

/** The worker process: `node bench/fleet.bench.ts --worker '{"space":"..."}'`. */
async function runWorker(config: WorkerConfig): Promise<void> {
  const { runtime, storage } = openRuntime(config.space);
  const worker = createCodemodeWorker({
    runtime,
    connection: { redis: REDIS_URL },
    name: config.space,
    concurrency: CONCURRENCY,
    logger: { warn() {} },
  });
  await worker.waitUntilReady();
  process.send?.({ event: "ready" });
  process.once("SIGTERM", async () => {
    await worker.close();
    await runtime.close();
    await storage.close();
    process.exit(0);
  });
}

function startWorker(space: string): Promise<ChildProcess> {
  const child = fork(fileURLToPath(import.meta.url), ["--worker", JSON.stringify({ space })], {
    execArgv: [],
    stdio: ["ignore", "ignore", "inherit", "ipc"],
  });
  return new Promise((resolve, reject) => {
    child.on("message", (message: { event?: string }) => message.event === "ready" && resolve(child));
    child.once("exit", (code) => reject(new Error(`a fleet bench worker exited with ${code} before it was ready`)));
  });
}

/** Submits one run and resolves with its submit → outcome time, checking the outcome. */
async function oneRun(queue: CodemodeQueue): Promise<number> {
  const started = performance.now();
  const submitted = await queue.submit({ code: PROGRAM });
  check(!("status" in submitted), `submit failed: ${JSON.stringify(submitted)}`);
  const outcome = await queue.waitForOutcome(submitted.executionId, { timeoutMs: 60_000 });
  check(
    outcome.status === "completed" && outcome.result === 3,
    `the run did not complete: ${JSON.stringify(outcome).slice(0, 300)}`,
  );
  return performance.now() - started;
}

async function measure(workers: number): Promise<{ rates: number[]; latencies: number[] }> {
  const space = `codemode-bench-fleet-${randomUUID().slice(0, 8)}`;
  const { runtime, storage } = openRuntime(space);
  const queue = createCodemodeQueue({ runtime, connection: { redis: REDIS_URL }, name: space, logger: { warn() {} } });
  const children: ChildProcess[] = [];
  try {
    await queue.ready();
    for (let index = 0; index < workers; index++) children.push(await startWorker(space));
    await Promise.all(Array.from({ length: 20 }, () => oneRun(queue)));
    const rates: number[] = [];
    for (let burst = 0; burst < BURSTS; burst++) {
      const started = performance.now();
      await Promise.all(Array.from({ length: BURST }, () => oneRun(queue)));
      rates.push(BURST / ((performance.now() - started) / 1_000));
    }
    const latencies: number[] = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: workers * 2 }, async () => {
        while (next++ < LATENCY_RUNS) latencies.push(await oneRun(queue));
      }),
    );
    return { rates, latencies };
  } finally {
    await Promise.all(
      children.map(
        (child) =>
          new Promise((resolve) => {
            child.once("exit", resolve);
            child.kill("SIGTERM");
          }),
      ),
    );
    await queue.bullmq.obliterate({ force: true }).catch(() => undefined);
    await queue.close();
    await runtime.close();
    await storage.close();
    const client = createClient({ url: REDIS_URL });
    await client.connect();
    const keys = await client.keys(`${space}*`);
    if (keys.length > 0) await client.del(keys);
    await client.close();
  }
}

async function fleetRows(): Promise<BenchRow[]> {
  const unreachable = await tcpUnreachable(REDIS_URL);
  if (unreachable)
    throw new Error(
      `the fleet benchmark needs Redis at ${REDIS_URL} (${unreachable}); start it, or leave \`fleet\` out`,
    );
  const benchmark = `fleet on Redis: runs of 3 calls, worker processes × concurrency ${CONCURRENCY}, inline host`;
  const rows: BenchRow[] = [];
  for (const workers of WORKER_COUNTS) {
    const { rates, latencies } = await measure(workers);
    const label = `${workers} worker process${workers > 1 ? "es" : ""}`;
    rows.push(
      {
        benchmark,
        subject: `${label}: executions (bursts of ${BURST})`,
        unit: "/s",
        median: percentile(rates, 50),
        p90: Math.min(...rates),
        samples: rates.length,
      },
      {
        benchmark,
        subject: `${label}: submit → outcome, median (${workers * 2} in flight)`,
        unit: "ms",
        median: percentile(latencies, 50),
        samples: latencies.length,
      },
      {
        benchmark,
        subject: `${label}: submit → outcome, p95 (${workers * 2} in flight)`,
        unit: "ms",
        median: percentile(latencies, 95),
        samples: latencies.length,
      },
    );
  }
  return rows;
}

export const fleetBenchmark: Benchmark = {
  name: "fleet",
  description: "@codemode/bullmq on Redis: executions/s with 1, 2 and 4 worker processes, submit → outcome latency",
  run: fleetRows,
};

if (process.argv[2] === "--worker" && process.argv[1] === fileURLToPath(import.meta.url))
  await runWorker(JSON.parse(process.argv[3] ?? "{}") as WorkerConfig);
