/**
 * How far fresh isolates scale on this machine, without anything of the runtime: the lifecycle
 * of one pass (bench/isolate-loop.ts) in this process alone, in two worker threads at once, and
 * in two child processes at once. It bounds what any number of executions in flight can reach:
 * every pass needs a fresh isolate (SPEC §15), and isolated-vm creates and disposes them
 * synchronously on the calling thread.
 */
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { type Benchmark, type BenchRow, stats } from "./harness.ts";
import { lifecycles } from "./isolate-loop.ts";

const LOOP = fileURLToPath(new URL("./isolate-loop.ts", import.meta.url));
const COUNT = 300;
const ROUNDS = 3;

function inWorker(count: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(LOOP, { workerData: { count } });
    worker.once("message", (perSecond: number) => {
      resolve(perSecond);
      void worker.terminate();
    });
    worker.once("error", reject);
  });
}

function inProcess(count: number): Promise<number> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [LOOP, String(count)], { encoding: "utf8" }, (error, stdout) =>
      error ? reject(error) : resolve(Number(stdout.trim())),
    );
  });
}

async function scaling(): Promise<BenchRow[]> {
  const samples: Record<"one" | "threads" | "processes", number[]> = { one: [], threads: [], processes: [] };
  await lifecycles(30);
  for (let round = 0; round < ROUNDS; round++) {
    samples.one.push(await lifecycles(COUNT));
    samples.threads.push(
      (await Promise.all([inWorker(COUNT / 2), inWorker(COUNT / 2)])).reduce((sum, value) => sum + value, 0),
    );
    samples.processes.push(
      (await Promise.all([inProcess(COUNT / 2), inProcess(COUNT / 2)])).reduce((sum, value) => sum + value, 0),
    );
  }
  const one = stats(samples.one);
  const threads = stats(samples.threads);
  const processes = stats(samples.processes);
  const benchmark = "fresh isolates per second (new isolate, context, run, dispose), nothing of the runtime";
  return [
    { benchmark, subject: "one thread", unit: "/s", median: one.median, samples: one.n },
    {
      benchmark,
      subject: "two worker threads at once (sum)",
      unit: "/s",
      median: threads.median,
      ratio: threads.median / one.median,
      versus: "one thread",
      samples: threads.n,
    },
    {
      benchmark,
      subject: "two processes at once (sum)",
      unit: "/s",
      median: processes.median,
      ratio: processes.median / one.median,
      versus: "one thread",
      samples: processes.n,
    },
  ];
}

export const isolatesBenchmark: Benchmark = {
  name: "isolates",
  description: "how far fresh isolates scale on this machine: one thread, two worker threads, two processes",
  run: scaling,
};
