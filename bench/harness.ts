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
  unit: "ms" | "µs" | "/s";
  median: number;
  /** 90th percentile (for "/s" rows: the 10th, i.e. the slow end). */
  p90?: number;
  /** `median / baseline median`, when the row is compared with a baseline of the same run. */
  ratio?: number;
  /** Short name of the baseline the ratio is against, e.g. "A". */
  versus?: string;
  /** The SPEC §15 target this row is checked against, as text. */
  target?: string;
  /** Samples behind `median` (after warm-up). */
  samples?: number;
}

export interface Benchmark {
  /** Selects the benchmark on the command line: `npm run bench -- <name> ...`. */
  name: string;
  /** One line for the report: what it measures. */
  description: string;
  run(): Promise<BenchRow[]>;
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
  return { median: percentile(samples, 50), p90: percentile(samples, 90), min: Math.min(...samples), n: samples.length };
}

/**
 * Times several tasks interleaved: each round runs every task once, in an order that rotates
 * from round to round, so drift (thermal, GC, noisy neighbours) hits all of them alike.
 * Returns wall-clock milliseconds per task, warm-up rounds dropped.
 */
export async function sampleInterleaved<K extends string>(tasks: Readonly<Record<K, () => Promise<void>>>, options: { warmup: number; iterations: number }): Promise<Record<K, number[]>> {
  const names = Object.keys(tasks) as K[];
  const samples = Object.fromEntries(names.map((name) => [name, [] as number[]])) as Record<K, number[]>;
  for (let round = 0; round < options.warmup + options.iterations; round++) {
    for (let offset = 0; offset < names.length; offset++) {
      const name = names[(round + offset) % names.length]!;
      const started = performance.now();
      await tasks[name]();
      const elapsed = performance.now() - started;
      if (round >= options.warmup) samples[name].push(elapsed);
    }
  }
  return samples;
}

/** Fails the benchmark loudly when a measured run did not do what it should. */
export function check(condition: boolean, message: string): asserts condition {
  if (!condition) throw new Error(`benchmark check failed: ${message}`);
}
