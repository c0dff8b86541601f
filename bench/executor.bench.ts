/**
 * The sandbox executor (no durable log) against baseline A (bare isolated-vm).
 *
 * 1. cold pass: 5 reads + 1 write, a fresh isolate per pass on both sides.
 * 2. bridge call: the cost of one connector call, from passes of N sequential awaited calls
 *    minus passes of 0 calls (the fixed cost of a pass cancels out).
 */
import {
  createIsolatedVmExecutor,
  type Executor,
  type HostReply,
  type SandboxRequest,
  valueCodec,
} from "@codemode/core/sandbox";
import { bareIsolatedVm } from "./baselines.ts";
import { type Benchmark, type BenchRow, check, perCallCost, sampleInterleaved, stats } from "./harness.ts";
import { type BenchProgram, fiveReadsOneWrite, sequentialCalls } from "./programs.ts";

const COLD_WARMUP = 20;
const COLD_ITERATIONS = 200;
const CALLS = 2_000;
const CALL_WARMUP = 3;
const CALL_ITERATIONS = 40;

/** A runner for one program through the library's executor: one pass, fresh isolate. */
function throughExecutor(executor: Executor, program: BenchProgram): () => Promise<string> {
  const code = `async () => {${program.body}\n}`;
  const onRequest = async (request: SandboxRequest): Promise<HostReply> => {
    if (request.type !== "call") return { kind: "error", message: `unexpected ${request.type} request` };
    const args = request.args === "" ? undefined : valueCodec.decode(request.args);
    return { kind: "value", value: valueCodec.encode(program.answer(request.connector, request.method, args)) ?? "" };
  };
  return async () => {
    const result = await executor.runPass({
      code,
      connectors: program.connectors,
      onRequest,
      // What the durable runtime passes: replay-stable clock and randomness.
      deterministic: { seed: "bench", clockMs: 1_700_000_000_000 },
    });
    if (result.status !== "returned") throw new Error(`the pass did not return: ${JSON.stringify(result)}`);
    return result.value;
  };
}

/** Wraps a runner as a timed task that also checks the program's result. */
function task(run: () => Promise<string>, program: BenchProgram, who: string): () => Promise<void> {
  return async () => {
    const value = await run();
    check(value === program.expected, `${who} returned ${value}, expected ${program.expected}`);
  };
}

async function coldPass(executor: Executor): Promise<BenchRow[]> {
  const program = fiveReadsOneWrite;
  const samples = await sampleInterleaved(
    {
      executor: task(throughExecutor(executor, program), program, "executor"),
      bare: task(bareIsolatedVm(program), program, "A"),
    },
    { warmup: COLD_WARMUP, iterations: COLD_ITERATIONS },
  );
  const a = stats(samples.bare);
  const e = stats(samples.executor);
  const benchmark = "cold pass: 5 reads + 1 write";
  return [
    { benchmark, subject: "A: bare isolated-vm", unit: "ms", median: a.median, p90: a.p90, samples: a.n },
    {
      benchmark,
      subject: "executor (fresh isolate, no log)",
      unit: "ms",
      median: e.median,
      p90: e.p90,
      ratio: e.median / a.median,
      versus: "A",
      target: "durable path ≤ 1.2× A",
      samples: e.n,
    },
  ];
}

async function bridgeCall(executor: Executor): Promise<BenchRow[]> {
  const many = sequentialCalls(CALLS);
  const none = sequentialCalls(0);
  const samples = await sampleInterleaved(
    {
      executorMany: task(throughExecutor(executor, many), many, "executor"),
      executorNone: task(throughExecutor(executor, none), none, "executor"),
      bareMany: task(bareIsolatedVm(many), many, "A"),
      bareNone: task(bareIsolatedVm(none), none, "A"),
    },
    { warmup: CALL_WARMUP, iterations: CALL_ITERATIONS },
  );
  const a = perCallCost(samples.bareMany, samples.bareNone, CALLS);
  const e = perCallCost(samples.executorMany, samples.executorNone, CALLS);
  const benchmark = `per connector call (${CALLS} sequential awaits, minus 0-call pass)`;
  const empty = "pass with 0 calls";
  return [
    { benchmark, subject: "A: applySyncPromise round trip", unit: "µs", median: a.median, p90: a.p90, samples: a.n },
    {
      benchmark,
      subject: "executor: submit + Reference.apply",
      unit: "µs",
      median: e.median,
      p90: e.p90,
      ratio: e.median / a.median,
      versus: "A",
      target: "durable path ≤ 1.5× A",
      samples: e.n,
    },
    {
      benchmark: empty,
      subject: "A: bare isolated-vm",
      unit: "ms",
      median: a.empty.median,
      p90: a.empty.p90,
      samples: a.empty.n,
    },
    {
      benchmark: empty,
      subject: "executor (fresh isolate, no log)",
      unit: "ms",
      median: e.empty.median,
      p90: e.empty.p90,
      ratio: e.empty.median / a.empty.median,
      versus: "A",
      samples: e.empty.n,
    },
  ];
}

export const executorBenchmark: Benchmark = {
  name: "executor",
  description:
    "sandbox executor (createIsolatedVmExecutor, no durable log) vs A, a bare isolated-vm run of the same program",
  async run() {
    const executor = createIsolatedVmExecutor({ timeoutMs: 30_000 });
    try {
      return [...(await coldPass(executor)), ...(await bridgeCall(executor))];
    } finally {
      await executor.close();
    }
  },
};
