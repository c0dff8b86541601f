/**
 * The durable runtime (executor + log on the in-memory Keyv store) against baseline A.
 *
 * 1. cold pass: 5 reads + 1 write through `runtime.execute`, logged durably.
 * 2. per connector call: passes of N sequential awaited calls minus passes of 0 calls.
 *
 * Tools the programs only read from are declared `readOnly` (as a user declares lookups), so a
 * new call is recorded with one write; the per-call cost of a tool that may change things (two
 * writes, the second shared with the next call) is its own row.
 *
 * Every runtime here runs its passes on the runtime's own thread (`sandboxHost: "inline"`), or on
 * sandbox threads where a row says so: these rows measure the in-process executor, as they did
 * before sandbox processes became the default. bench/hosts.bench.ts measures each host.
 */
import { performance } from "node:perf_hooks";
import { type CodemodeRuntime, type Connector, createCodemodeRuntime, defineConnector } from "@codemode/core";
import { createIsolatedVmExecutor } from "@codemode/core/sandbox";
import { bareIsolatedVm } from "./baselines.ts";
import { type Benchmark, type BenchRow, check, perCallCost, sampleInterleaved, stats } from "./harness.ts";
import { type BenchProgram, fiveReadsOneWrite, sequentialCalls } from "./programs.ts";

const CALLS = 1_000;

/** The programs' reads: every method but the write of 5 reads + 1 write. */
const isRead = (method: string) => method !== "updateCustomer";

export function connectorsFor(program: BenchProgram, options: { readOnly: boolean } = { readOnly: true }): Connector[] {
  return Object.entries(program.connectors).map(([name, methods]) =>
    defineConnector({
      name,
      tools: Object.fromEntries(
        methods.map((method) => [
          method,
          {
            readOnly: options.readOnly && isRead(method),
            execute: async (args: unknown) => program.answer(name, method, args),
          },
        ]),
      ),
    }),
  );
}

export function throughRuntime(runtime: CodemodeRuntime, program: BenchProgram): () => Promise<void> {
  const code = `async () => {${program.body}\n}`;
  return async () => {
    const outcome = await runtime.execute({ code });
    check(outcome.status === "completed", `the runtime did not complete: ${JSON.stringify(outcome).slice(0, 300)}`);
    const value = JSON.stringify(outcome.status === "completed" ? outcome.result : null);
    check(value === program.expected, `the runtime returned ${value}, expected ${program.expected}`);
  };
}

export function bare(program: BenchProgram): () => Promise<void> {
  const run = bareIsolatedVm(program);
  return async () => {
    const value = await run();
    check(value === program.expected, `A returned ${value}, expected ${program.expected}`);
  };
}

/** Back-to-back passes timed as one burst: a loaded server, with no idle turn between them. */
const BURST = 10;

async function coldPass(): Promise<BenchRow[]> {
  const program = fiveReadsOneWrite;
  // A fresh isolate per pass, as before warm isolates were the default.
  const runtime = createCodemodeRuntime({
    connectors: connectorsFor(program),
    maxExecutions: 20,
    isolateReuse: false,
    sandboxHost: "inline",
  });
  // Warm isolates, a fresh context per pass (the default).
  const warm = createCodemodeRuntime({
    connectors: connectorsFor(program),
    maxExecutions: 20,
    isolateReuse: true,
    sandboxHost: "inline",
  });
  const runWarm = throughRuntime(warm, program);
  const idleSamples: number[] = [];
  // SPEC §15's second row: isolates created ahead (each still serves one pass only). Between
  // passes the executor is given time to prepare the next one, as a server between requests.
  const warmExecutor = createIsolatedVmExecutor({ prewarm: 1, isolateReuse: false });
  const prewarmed = createCodemodeRuntime({
    connectors: connectorsFor(program),
    maxExecutions: 20,
    executor: warmExecutor,
  });
  const runPrewarmed = throughRuntime(prewarmed, program);
  const prewarmedSamples: number[] = [];
  try {
    const samples = await sampleInterleaved(
      {
        runtime: throughRuntime(runtime, program),
        bare: bare(program),
        prewarmed: async () => {
          await warmExecutor.warm();
          const started = performance.now();
          await runPrewarmed();
          prewarmedSamples.push(performance.now() - started);
        },
        // One sample is a burst of BURST passes back to back, divided by BURST.
        warmBackToBack: async () => {
          for (let pass = 0; pass < BURST; pass++) await runWarm();
        },
        // An agent waiting on its model: an idle turn (a timer) before each pass, not timed.
        warmIdle: async () => {
          await new Promise((resolve) => setTimeout(resolve, 2));
          const started = performance.now();
          await runWarm();
          idleSamples.push(performance.now() - started);
        },
      },
      { warmup: 10, iterations: 100 },
    );
    const a = stats(samples.bare);
    const r = stats(samples.runtime);
    // The pass alone, without the untimed wait for the next isolate (last 200 = after warm-up).
    const p = stats(prewarmedSamples.slice(-200));
    const b = stats(samples.warmBackToBack.map((sample) => sample / BURST));
    const i = stats(idleSamples.slice(-100));
    const benchmark = "durable cold pass: 5 reads + 1 write (in-memory store)";
    return [
      { benchmark, subject: "A: bare isolated-vm", unit: "ms", median: a.median, p90: a.p90, samples: a.n },
      {
        benchmark,
        subject: "runtime.execute, inline host, warm isolate (isolateReuse), back to back",
        unit: "ms",
        median: b.median,
        p90: b.p90,
        ratio: b.median / a.median,
        versus: "A",
        target: "≤ 0.8× A, below @utcp/code-mode",
        samples: b.n * BURST,
      },
      {
        benchmark,
        subject: "runtime.execute, inline host, warm isolate (isolateReuse), idle turn between runs",
        unit: "ms",
        median: i.median,
        p90: i.p90,
        ratio: i.median / a.median,
        versus: "A",
        target: "≤ 0.6× A",
        samples: i.n,
      },
      {
        benchmark,
        subject: "runtime.execute, inline host, fresh isolate per pass (isolateReuse: false)",
        unit: "ms",
        median: r.median,
        p90: r.p90,
        ratio: r.median / a.median,
        versus: "A",
        target: "",
        samples: r.n,
      },
      {
        benchmark,
        subject: "runtime.execute, inline host, fresh isolate prepared ahead (prewarm, isolateReuse: false)",
        unit: "ms",
        median: p.median,
        p90: p.p90,
        ratio: p.median / a.median,
        versus: "A",
        target: "≤ 0.6× A",
        samples: p.n,
      },
    ];
  } finally {
    await Promise.all([runtime.close(), warm.close(), prewarmed.close(), warmExecutor.close()]);
  }
}

async function perCall(): Promise<BenchRow[]> {
  const many = sequentialCalls(CALLS);
  const none = sequentialCalls(0);
  const runtime = createCodemodeRuntime({ connectors: connectorsFor(many), maxExecutions: 10, sandboxHost: "inline" });
  const writing = createCodemodeRuntime({
    connectors: connectorsFor(many, { readOnly: false }),
    maxExecutions: 10,
    sandboxHost: "inline",
  });
  // Passes on worker threads: each call also crosses between threads (the price of sandboxThreads).
  const threaded = createCodemodeRuntime({
    connectors: connectorsFor(many),
    maxExecutions: 10,
    sandboxHost: "thread",
    sandboxThreads: 2,
  });
  try {
    const samples = await sampleInterleaved(
      {
        runtimeMany: throughRuntime(runtime, many),
        runtimeNone: throughRuntime(runtime, none),
        writingMany: throughRuntime(writing, many),
        writingNone: throughRuntime(writing, none),
        threadedMany: throughRuntime(threaded, many),
        threadedNone: throughRuntime(threaded, none),
        bareMany: bare(many),
        bareNone: bare(none),
      },
      { warmup: 3, iterations: 20 },
    );
    const a = perCallCost(samples.bareMany, samples.bareNone, CALLS);
    const r = perCallCost(samples.runtimeMany, samples.runtimeNone, CALLS);
    const w = perCallCost(samples.writingMany, samples.writingNone, CALLS);
    const t = perCallCost(samples.threadedMany, samples.threadedNone, CALLS);
    const benchmark = `durable per connector call (${CALLS} sequential awaits, in-memory store)`;
    return [
      { benchmark, subject: "A: applySyncPromise round trip", unit: "µs", median: a.median, p90: a.p90, samples: a.n },
      {
        benchmark,
        subject: "runtime, inline host, readOnly tool: bridge + 1 log write",
        unit: "µs",
        median: r.median,
        p90: r.p90,
        ratio: r.median / a.median,
        versus: "A",
        target: "≤ 1.3× A per call",
        samples: r.n,
      },
      {
        benchmark,
        subject: "runtime, inline host, tool that may change things: bridge + 2 log writes",
        unit: "µs",
        median: w.median,
        p90: w.p90,
        ratio: w.median / a.median,
        versus: "A",
        samples: w.n,
      },
      {
        benchmark,
        subject: 'runtime, sandboxHost: "thread", readOnly tool, sandboxThreads: 2 (+ a hop between threads)',
        unit: "µs",
        median: t.median,
        p90: t.p90,
        ratio: t.median / a.median,
        versus: "A",
        samples: t.n,
      },
    ];
  } finally {
    await Promise.all([runtime.close(), writing.close(), threaded.close()]);
  }
}

export const runtimeBenchmark: Benchmark = {
  name: "runtime",
  description:
    "the durable runtime on the in-memory store: cold pass and per-call cost (replay on resume: bench/replay.bench.ts)",
  repeat: 5,
  async run() {
    return [...(await coldPass()), ...(await perCall())];
  },
};
