/**
 * The durable runtime on QuickJS (`executor: "quickjs"`), on the programs and under the row names
 * of runtime.bench.ts and replay.bench.ts, so its rows sit beside isolated-vm's and beside the
 * peers' (@ai-sdk/code-mode runs QuickJS too, in a worker thread).
 *
 * 1. cold pass: 5 reads + 1 write, against A measured interleaved with it.
 * 2. per connector call: passes of 1,000 sequential awaits minus passes of none, against A.
 * 3. replays on resume: approve after 1,000 recorded calls minus approve after 0, against the
 *    isolated-vm runtime measured interleaved with it (replay rows have no A).
 *
 * QuickJS is measured on two sandbox threads (`sandboxHost: "thread"`, what the runtime chose for
 * it before sandbox processes became the default) and on the runtime's thread (`sandboxHost:
 * "inline"`), beside the isolated-vm runtime on the runtime's thread (its warm isolates) of the
 * same run; each host is pinned, so these rows measure what they did before sandbox processes
 * became the default (bench/hosts.bench.ts measures QuickJS in sandbox processes). The
 * cold-pass and per-call targets compare with @ai-sdk/code-mode's ratio to A in
 * bench/peers.bench.ts, which runs just before this in the same process (`node bench/run.ts peers
 * quickjs`); a row says when it had nothing to compare with. Run once, not repeated: a row says
 * whether its target is met, and merged runs would keep the first run's verdict beside the
 * median of all.
 */
import { type CodemodeRuntime, type CodemodeRuntimeOptions, createCodemodeRuntime } from "@codemode/core";
import { type Benchmark, type BenchRow, check, perCallCost, type Stats, sampleInterleaved, stats } from "./harness.ts";
import { peerRatios } from "./peers.bench.ts";
import { fiveReadsOneWrite, sequentialCalls } from "./programs.ts";
import { type ApproveSamples, bench as replayConnector, sampleApprovesAfter } from "./replay.bench.ts";
import { bare, connectorsFor, throughRuntime } from "./runtime.bench.ts";

const CALLS = 1_000;
const REPLAYED = 1_000;
/** The peer QuickJS is held against (QuickJS in a worker thread, no log). */
const PEER = "@ai-sdk/code-mode";
const REPLAY_TARGET = 50_000;

/** Row names shared with runtime.bench.ts, peers.bench.ts and replay.bench.ts. */
const COLD_PASS = "durable cold pass: 5 reads + 1 write (in-memory store)";
const PER_CALL = `durable per connector call (${CALLS} sequential awaits, in-memory store)`;
const REPLAY = `replayed calls on resume (approve after ${REPLAYED} recorded calls, minus approve after 0)`;

/** The runtimes measured, each with its own runtime per program. */
const SANDBOXES = {
  quickjs: {
    subject: 'executor: "quickjs", sandboxHost: "thread" (2 sandbox threads)',
    options: { executor: "quickjs", sandboxHost: "thread" },
  },
  quickjsHere: {
    subject: 'executor: "quickjs", sandboxHost: "inline" (passes on the runtime\'s thread)',
    options: { executor: "quickjs", sandboxHost: "inline" },
  },
  isolatedVm: {
    subject: 'executor: "isolated-vm", sandboxHost: "inline" (warm isolate), for comparison',
    options: { executor: "isolated-vm", sandboxHost: "inline" },
  },
} satisfies Record<string, { subject: string; options: Partial<CodemodeRuntimeOptions> }>;
type Sandbox = keyof typeof SANDBOXES;
const NAMES = Object.keys(SANDBOXES) as Sandbox[];
const isQuickJs = (name: Sandbox) => name !== "isolatedVm";

function runtimesFor(connectors: CodemodeRuntimeOptions["connectors"], extra: Partial<CodemodeRuntimeOptions> = {}) {
  return Object.fromEntries(
    NAMES.map((name) => [
      name,
      createCodemodeRuntime({ connectors, maxExecutions: 20, ...extra, ...SANDBOXES[name].options }),
    ]),
  ) as Record<Sandbox, CodemodeRuntime>;
}

async function closeAll(runtimes: Record<Sandbox, CodemodeRuntime>): Promise<void> {
  await Promise.all(NAMES.map((name) => runtimes[name].close()));
}

/** Fails loudly when a runtime did not run the sandbox and host it was asked for (a fallback, a stale build). */
function checkSandboxes(runtimes: Record<Sandbox, CodemodeRuntime>): void {
  for (const name of NAMES) {
    const { sandbox, sandboxHost } = runtimes[name].load();
    const { executor, sandboxHost: host } = SANDBOXES[name].options;
    check(sandbox === executor && sandboxHost === host, `${SANDBOXES[name].subject} ran on ${sandboxHost}, ${sandbox}`);
  }
}

/** The target of a QuickJS row against the peer's ratio to A in this run, and whether it is met. */
function belowPeer(figure: "coldPass" | "perCall", ratio: number): string {
  const peer = peerRatios.get(PEER)?.[figure];
  if (peer === undefined) return `≤ ${PEER}: not compared (run with peers: node bench/run.ts peers quickjs)`;
  return `≤ ${PEER} (${peer.toFixed(2)}× A in this run): ${ratio <= peer ? "met" : "not met"}`;
}

async function coldPass(): Promise<BenchRow[]> {
  const program = fiveReadsOneWrite;
  const runtimes = runtimesFor(connectorsFor(program));
  try {
    const samples = await sampleInterleaved(
      {
        bare: bare(program),
        quickjs: throughRuntime(runtimes.quickjs, program),
        quickjsHere: throughRuntime(runtimes.quickjsHere, program),
        isolatedVm: throughRuntime(runtimes.isolatedVm, program),
      },
      { warmup: 10, iterations: 200 },
    );
    checkSandboxes(runtimes);
    const a = stats(samples.bare);
    const rows: BenchRow[] = [
      { benchmark: COLD_PASS, subject: "A: bare isolated-vm, beside QuickJS", unit: "ms", ...figures(a) },
    ];
    for (const name of NAMES) {
      const measured = stats(samples[name]);
      const ratio = measured.median / a.median;
      rows.push({
        benchmark: COLD_PASS,
        subject: `runtime.execute, ${SANDBOXES[name].subject}`,
        unit: "ms",
        ...figures(measured),
        ratio,
        versus: "A",
        ...(isQuickJs(name) ? { target: belowPeer("coldPass", ratio) } : {}),
      });
    }
    return rows;
  } finally {
    await closeAll(runtimes);
  }
}

async function perCall(): Promise<BenchRow[]> {
  const many = sequentialCalls(CALLS);
  const none = sequentialCalls(0);
  const runtimes = runtimesFor(connectorsFor(many));
  try {
    const tasks: Record<string, () => Promise<void>> = { bareMany: bare(many), bareNone: bare(none) };
    for (const name of NAMES) {
      tasks[`${name}Many`] = throughRuntime(runtimes[name], many);
      tasks[`${name}None`] = throughRuntime(runtimes[name], none);
    }
    const samples = await sampleInterleaved(tasks, { warmup: 3, iterations: 30 });
    checkSandboxes(runtimes);
    const cost = (name: string) => perCallCost(samples[`${name}Many`]!, samples[`${name}None`]!, CALLS);
    const a = cost("bare");
    const rows: BenchRow[] = [
      {
        benchmark: PER_CALL,
        subject: "A: applySyncPromise round trip, beside QuickJS",
        unit: "µs",
        median: a.median,
        p90: a.p90,
        samples: a.n,
      },
    ];
    for (const name of NAMES) {
      const measured = cost(name);
      const ratio = measured.median / a.median;
      rows.push({
        benchmark: PER_CALL,
        subject: `runtime, readOnly tool, ${SANDBOXES[name].subject}`,
        unit: "µs",
        median: measured.median,
        p90: measured.p90,
        ratio,
        versus: "A",
        ...(isQuickJs(name) ? { target: belowPeer("perCall", ratio) } : {}),
        samples: measured.n,
      });
    }
    return rows;
  } finally {
    await closeAll(runtimes);
  }
}

const WARMUP_ROUNDS = 3;
const MEASURED_ROUNDS = 20;

/** Approve after 0 and after REPLAYED recorded calls, every runtime and length in a shuffled order. */
async function replays(): Promise<BenchRow[]> {
  const runtimes = runtimesFor([replayConnector], { maxExecutions: 10 });
  let samples: Record<Sandbox, ApproveSamples>;
  try {
    samples = await sampleApprovesAfter(runtimes, REPLAYED, { warmup: WARMUP_ROUNDS, measured: MEASURED_ROUNDS });
    checkSandboxes(runtimes);
  } finally {
    await closeAll(runtimes);
  }
  // As replay.bench.ts: floored at 1 µs, so that a difference lost in the noise gives a huge rate.
  const rates = Object.fromEntries(
    NAMES.map((name) => {
      const empty = stats(samples[name].empty);
      const full = stats(samples[name].full);
      const perSecond = (milliseconds: number) => (REPLAYED / Math.max(0.001, milliseconds - empty.median)) * 1_000;
      return [name, { median: perSecond(full.median), p90: perSecond(full.p90), n: full.n, empty, full }];
    }),
  ) as Record<Sandbox, { median: number; p90: number; n: number; empty: Stats; full: Stats }>;
  return NAMES.flatMap((name): BenchRow[] => {
    const rate = rates[name];
    const subject = SANDBOXES[name].subject;
    return [
      { benchmark: REPLAY, subject: `approve with 0 recorded calls, ${subject}`, unit: "ms", ...figures(rate.empty) },
      {
        benchmark: REPLAY,
        subject: `approve with ${REPLAYED} recorded calls, ${subject}`,
        unit: "ms",
        ...figures(rate.full),
      },
      {
        benchmark: REPLAY,
        subject: `replayed calls per second, ${subject}`,
        unit: "/s",
        median: rate.median,
        p90: rate.p90,
        samples: rate.n,
        ...(isQuickJs(name)
          ? {
              ratio: rate.median / rates.isolatedVm.median,
              versus: "isolated-vm",
              target: `≥ ${REPLAY_TARGET.toLocaleString("en-US")} /s: ${rate.median >= REPLAY_TARGET ? "met" : "not met"}`,
            }
          : {}),
      },
    ];
  });
}

/** A row's median, p90 and sample count. */
function figures(measured: Pick<Stats, "median" | "p90" | "n">): Pick<BenchRow, "median" | "p90" | "samples"> {
  return { median: measured.median, p90: measured.p90, samples: measured.n };
}

export const quickjsBenchmark: Benchmark = {
  name: "quickjs",
  description: `the durable runtime on QuickJS: cold pass and per call against A and ${PEER}, replays per second`,
  async run() {
    return [...(await coldPass()), ...(await perCall()), ...(await replays())];
  },
};
