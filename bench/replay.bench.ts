/**
 * Replay on resume, by the length of the log (in-memory store): `approve` of an execution paused
 * after N recorded calls replays them, so its cost minus that of `approve` after 0 calls is the
 * replay of N calls. Replayed calls per second = N / that difference; replay is linear when the
 * cost per replayed call stays the same from 10 to 10,000 calls: the approve times lie on a
 * straight line (the "replay length" plot).
 *
 * Each round pauses one execution per length (a loop of N awaited reads, then a gated write) and
 * times its `approve`, the lengths in an order that rotates from round to round. The 10,000-call
 * program takes about a second to record, so it runs only every fifth round after the warm-up.
 *
 * Replayed calls per second are reported for 1,000 and 10,000 calls only: replaying 10 or 100
 * (about 0.1 and 1 ms) is less than the spread of one approve, which starts a fresh isolate.
 *
 * Passes run on the runtime's own thread (`sandboxHost: "inline"`), as before sandbox processes
 * became the default; bench/hosts.bench.ts measures replays on each host.
 */
import { performance } from "node:perf_hooks";
import { type CodemodeRuntime, createCodemodeRuntime, defineConnector } from "@codemode/core";
import { type Benchmark, type BenchRow, check, roundOrder, type Stats, stats } from "./harness.ts";

/** Recorded calls before the gated one; 0 is the baseline the others are measured against. */
const LENGTHS = [0, 10, 100, 1_000, 10_000] as const;
type Length = (typeof LENGTHS)[number];
/** The length of SPEC §15's target row. */
const TARGET_LENGTH = 1_000;
const WARMUP_ROUNDS = 3;
const ROUNDS = WARMUP_ROUNDS + 20;
/** The longest log is recorded every this many rounds only, from the first measured one. */
const LONG_EVERY = 5;
const LONG = 10_000;

/** The connector the replayed programs call (bench/quickjs.bench.ts replays them on QuickJS too). */
export const bench = defineConnector({
  name: "bench",
  tools: {
    echo: { execute: async (args: { i: number }) => ({ i: args.i, ok: true }) },
    write: { requiresApproval: true, execute: async () => ({ ok: true }) },
  },
});

const code = (count: number) =>
  `async () => { let sum = 0; for (let i = 0; i < ${count}; i++) sum += (await bench.echo({ i })).i; await bench.write({ sum }); return sum; }`;

/** Milliseconds of one `approve` of an execution paused after `count` recorded calls. */
export async function approveAfter(runtime: CodemodeRuntime, count: number): Promise<number> {
  const paused = await runtime.execute({ code: code(count) });
  check(
    paused.status === "paused",
    `expected a pause after ${count} calls, got ${JSON.stringify(paused).slice(0, 300)}`,
  );
  const started = performance.now();
  const done = await runtime.approve({ executionId: paused.executionId });
  const elapsed = performance.now() - started;
  const expected = (count * (count - 1)) / 2;
  check(
    done.status === "completed" && done.result === expected,
    `approve after ${count} calls did not complete with ${expected}: ${JSON.stringify(done).slice(0, 300)}`,
  );
  return elapsed;
}

/** One runtime's approve times after 0 recorded calls (`empty`) and after the length asked for (`full`). */
export type ApproveSamples = { empty: number[]; full: number[] };

/**
 * `approveAfter` on each runtime after 0 and after `length` recorded calls, every runtime and
 * length in a shuffled order each round (harness.ts `roundOrder`): the approve times of each
 * runtime, `warmup` rounds dropped (bench/hosts.bench.ts and bench/quickjs.bench.ts).
 */
export async function sampleApprovesAfter<K extends string>(
  runtimes: Readonly<Record<K, CodemodeRuntime>>,
  length: number,
  rounds: { warmup: number; measured: number },
): Promise<Record<K, ApproveSamples>> {
  const names = Object.keys(runtimes) as K[];
  const samples = Object.fromEntries(
    names.map((name): [K, ApproveSamples] => [name, { empty: [], full: [] }]),
  ) as Record<K, ApproveSamples>;
  const order = roundOrder(names.flatMap((name) => [0, length].map((count) => ({ name, count }))));
  for (let round = 0; round < rounds.warmup + rounds.measured; round++) {
    for (const { name, count } of order()) {
      const elapsed = await approveAfter(runtimes[name], count);
      if (round >= rounds.warmup) samples[name][count === 0 ? "empty" : "full"].push(elapsed);
    }
  }
  return samples;
}

async function sampleApproves(): Promise<Record<Length, number[]>> {
  // 10,000 echoes + the gated write is one entry more than the default log allows.
  const runtime = createCodemodeRuntime({
    connectors: [bench],
    maxExecutions: 10,
    limits: { maxLogEntries: 2 * LONG },
    sandboxHost: "inline",
  });
  const samples = Object.fromEntries(LENGTHS.map((length) => [length, [] as number[]])) as Record<Length, number[]>;
  try {
    for (let round = 0; round < ROUNDS; round++) {
      const lengths = LENGTHS.filter(
        (length) => length !== LONG || (round >= WARMUP_ROUNDS && (round - WARMUP_ROUNDS) % LONG_EVERY === 0),
      );
      for (let offset = 0; offset < lengths.length; offset++) {
        const length = lengths[(round + offset) % lengths.length]!;
        const elapsed = await approveAfter(runtime, length);
        if (round >= WARMUP_ROUNDS) samples[length].push(elapsed);
      }
    }
  } finally {
    await runtime.close();
  }
  return samples;
}

const label = (length: number) => length.toLocaleString("en-US");

async function replayByLength(): Promise<BenchRow[]> {
  const samples = await sampleApproves();
  const measured = Object.fromEntries(LENGTHS.map((length) => [length, stats(samples[length])])) as Record<
    Length,
    Stats
  >;
  const empty = measured[0];
  // Floored at 1 µs, so that a difference lost in the noise gives a huge rate, not a negative one.
  const perSecond = (length: number, milliseconds: number) =>
    (length / Math.max(0.001, milliseconds - empty.median)) * 1_000;
  const perCall = (length: Length) => ((measured[length].median - empty.median) / length) * 1_000;
  const series = (length: number) => ({
    name: "replay length",
    x: length,
    xLabel: "recorded calls replayed by approve",
    yLabel: "approve (ms)",
    line: "in-memory store",
  });
  const approveRow = (benchmark: string, length: Length, written = label(length)): BenchRow => ({
    benchmark,
    subject: `approve with ${written} recorded calls, inline host`,
    unit: "ms",
    median: measured[length].median,
    p90: measured[length].p90,
    samples: measured[length].n,
    series: series(length),
  });

  // The target row, under the same names as before the series was added, so results compare.
  const target = `replayed calls on resume (approve after ${TARGET_LENGTH} recorded calls, minus approve after 0)`;
  const atTarget = measured[TARGET_LENGTH];
  const targetRows: BenchRow[] = [
    approveRow(target, 0, "0"),
    approveRow(target, TARGET_LENGTH, String(TARGET_LENGTH)),
    {
      benchmark: target,
      subject: "replayed calls per second, inline host",
      unit: "/s",
      median: perSecond(TARGET_LENGTH, atTarget.median),
      p90: perSecond(TARGET_LENGTH, atTarget.p90),
      target: "≥ 100,000 /s",
      samples: atTarget.n,
    },
  ];

  const scaling = "replay length: approve after 10 to 10,000 recorded calls (in-memory store)";
  const scalingRows: BenchRow[] = [
    ...([10, 100, LONG] as const).map((length) => approveRow(scaling, length)),
    {
      benchmark: scaling,
      subject: `replayed calls per second, ${label(LONG)} recorded, inline host`,
      unit: "/s",
      median: perSecond(LONG, measured[LONG].median),
      p90: perSecond(LONG, measured[LONG].p90),
      samples: measured[LONG].n,
    },
    {
      benchmark: scaling,
      subject: `per replayed call, ${label(LONG)} recorded, inline host`,
      unit: "µs",
      median: perCall(LONG),
      ratio: perCall(LONG) / perCall(TARGET_LENGTH),
      versus: `${label(TARGET_LENGTH)} recorded`,
      target: "≈ 1×: linear",
      samples: measured[LONG].n,
    },
  ];
  return [...targetRows, ...scalingRows];
}

export const replayBenchmark: Benchmark = {
  name: "replay",
  description: "approve after 0 to 10,000 recorded calls on the in-memory store: replayed calls per second, linearity",
  repeat: 5,
  run: replayByLength,
};
