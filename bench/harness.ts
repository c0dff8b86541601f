/**
 * Shared pieces of the benchmarks: timing, statistics and the row every benchmark reports.
 *
 * A benchmark file exports a `Benchmark`; bench/run.ts lists them, runs them in order and prints
 * one table. Everything is measured as a ratio against a baseline run in the same process
 * (SPEC §15): absolute times on a shared 2-core machine drift, ratios of interleaved runs do not.
 */
import { performance } from "node:perf_hooks";

/** One line of the results table. */
export interface BenchRow {
  /** What is measured, e.g. "cold pass: 5 reads + 1 write". Rows of one benchmark share it. */
  benchmark: string;
  /** Who is measured, e.g. "executor" or "A: bare isolated-vm". */
  subject: string;
  unit: "ms" | "µs" | "/s" | "MB" | "B";
  median: number;
  /** 90th percentile (for "/s" rows: the 10th, i.e. the slow end). */
  p90?: number;
  /** `median / baseline median`, when the row is compared with a baseline of the same run. */
  ratio?: number;
  /** Short name of the baseline the ratio is against, e.g. "A". */
  versus?: string;
  /** The SPEC §15 target this row is checked against, as text. */
  target?: string;
  /** Samples behind `median` (after warm-up); for a repeated benchmark, summed over its runs. */
  samples?: number;
  /**
   * Makes the row a point of a plot: `name` picks the plot (one SVG per name, e.g. "replay
   * length"), `x` is the point's position on the x axis, labelled `xLabel`; the y value is
   * `median`. Points sharing `line` (default: the row's `benchmark`) are joined into one line.
   */
  series?: { name: string; x: number; xLabel: string; line?: string; yLabel?: string };
  /**
   * Set by bench/run.ts on the rows of a benchmark with `repeat`: how many runs were merged and
   * the spread of their medians and ratios (`median` and `ratio` are then medians over the runs).
   */
  runs?: { count: number; median: Range; ratio?: Range };
}

export interface Range {
  min: number;
  max: number;
}

export interface Benchmark {
  /** Selects the benchmark on the command line: `npm run bench -- <name> ...`. */
  name: string;
  /** One line for the report: what it measures. */
  description: string;
  /**
   * Runs of the whole benchmark: bench/run.ts runs it this many times and reports, per row, the
   * median of the runs' medians and ratios with their min–max (see `mergeRuns`). Default 1.
   */
  repeat?: number;
  run(): Promise<BenchRow[]>;
  /**
   * Results that are not timings (token counts, say): markdown read after `run`, printed and
   * written to RESULTS.md as a section of its own, headed by `section`. Default none.
   */
  report?: () => string;
  /** The heading of the `report` section. */
  section?: string;
}

export interface Stats {
  median: number;
  p90: number;
  min: number;
  n: number;
}

/** Nearest-rank percentile of a sample (p in 0..100). */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) throw new Error("percentile of an empty sample");
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1]!;
}

export function stats(samples: readonly number[]): Stats {
  return {
    median: percentile(samples, 50),
    p90: percentile(samples, 90),
    min: Math.min(...samples),
    n: samples.length,
  };
}

/**
 * The cost of one call in µs, from passes of `calls` calls and passes of none (both in ms):
 * (median with − median without) / calls. The p90 is the p90 of the passes with calls against
 * the median of those without; `empty` is the passes without calls.
 */
export function perCallCost(
  withCalls: readonly number[],
  without: readonly number[],
  calls: number,
): { median: number; p90: number; n: number; empty: Stats } {
  const many = stats(withCalls);
  const empty = stats(without);
  return {
    median: ((many.median - empty.median) / calls) * 1_000,
    p90: ((many.p90 - empty.median) / calls) * 1_000,
    n: many.n,
    empty,
  };
}

/**
 * Times several tasks interleaved: each round runs every task once, so drift (thermal, GC, noisy
 * neighbours) hits all of them alike, in an order shuffled afresh each round (the same orders on
 * every run), so that each task follows each other task as often. A fixed order, even one rotated
 * from round to round, gives each task the same predecessor in all but one round in n, and what a
 * task leaves behind (warm caches, a sandbox process or thread still busy) then always favours or
 * burdens the same next one: with the host modes, the inline host always followed the thread
 * host, whose pass leaves the runtime's code warm, and the process host followed bare isolated-vm.
 * Returns wall-clock milliseconds per task, warm-up rounds dropped.
 */
export async function sampleInterleaved<K extends string>(
  tasks: Readonly<Record<K, () => Promise<void>>>,
  options: { warmup: number; iterations: number },
): Promise<Record<K, number[]>> {
  const names = Object.keys(tasks) as K[];
  const samples = Object.fromEntries(names.map((name) => [name, [] as number[]])) as Record<K, number[]>;
  const order = roundOrder(names);
  for (let round = 0; round < options.warmup + options.iterations; round++) {
    for (const name of order()) {
      const started = performance.now();
      await tasks[name]();
      const elapsed = performance.now() - started;
      if (round >= options.warmup) samples[name].push(elapsed);
    }
  }
  return samples;
}

/** A fixed sequence of numbers in [0, 1) (mulberry32): every run of a benchmark runs its tasks in the same orders. */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/**
 * The order of `items` for each round of an interleaved benchmark (see `sampleInterleaved`): each
 * call answers them shuffled afresh (Fisher–Yates), in the same sequence of orders on every run.
 */
export function roundOrder<T>(items: readonly T[]): () => T[] {
  const random = seededRandom(0x5eed);
  return () => {
    const order = [...items];
    for (let index = order.length - 1; index > 0; index--) {
      const other = Math.floor(random() * (index + 1));
      [order[index], order[other]] = [order[other]!, order[index]!];
    }
    return order;
  };
}

/**
 * One row per (benchmark, subject) from the rows of several runs of one benchmark, in the order
 * they first appear: `median`, `p90` and `ratio` are the medians over the runs that reported
 * them, `samples` their sum, and `runs` keeps the min and max of the runs' medians and ratios.
 * A single run is returned as it is: `runs` marks only figures that are medians over runs.
 */
export function mergeRuns(runs: readonly (readonly BenchRow[])[]): BenchRow[] {
  if (runs.length === 1) return [...runs[0]!];
  const groups = new Map<string, BenchRow[]>();
  for (const row of runs.flat()) {
    const key = JSON.stringify([row.benchmark, row.subject]);
    const group = groups.get(key);
    if (group) group.push(row);
    else groups.set(key, [row]);
  }
  return [...groups.values()].map((group) => {
    const medians = group.map((row) => row.median);
    const p90s = group.flatMap((row) => (row.p90 === undefined ? [] : [row.p90]));
    const ratios = group.flatMap((row) => (row.ratio === undefined ? [] : [row.ratio]));
    const samples = group.flatMap((row) => (row.samples === undefined ? [] : [row.samples]));
    const { p90: _p90, ratio: _ratio, samples: _samples, ...first } = group[0]!;
    return {
      ...first,
      median: middle(medians),
      ...(p90s.length > 0 ? { p90: middle(p90s) } : {}),
      ...(ratios.length > 0 ? { ratio: middle(ratios) } : {}),
      ...(samples.length > 0 ? { samples: samples.reduce((sum, count) => sum + count, 0) } : {}),
      runs: { count: group.length, median: range(medians), ...(ratios.length > 0 ? { ratio: range(ratios) } : {}) },
    };
  });
}

/** The median of a few figures (the mean of the middle two for an even count); NaN stays NaN. */
function middle(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const half = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[half]! : (sorted[half - 1]! + sorted[half]!) / 2;
}

function range(values: readonly number[]): Range {
  return { min: Math.min(...values), max: Math.max(...values) };
}

/** Fails the benchmark loudly when a measured run did not do what it should. */
export function check(condition: boolean, message: string): asserts condition {
  if (!condition) throw new Error(`benchmark check failed: ${message}`);
}
