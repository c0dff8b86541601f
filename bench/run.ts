/**
 * `npm run bench`: builds, runs every benchmark, prints one table and rewrites bench/RESULTS.md
 * and the plots beside it (bench/plot-<series>.svg, one per scaling series, see plot.ts).
 * `npm run bench -- executor` runs only the named benchmarks (RESULTS.md and the plots are then
 * not rewritten). A benchmark with `repeat` is run that many times and its rows merged.
 *
 * To add a benchmark: write bench/<name>.bench.ts exporting a `Benchmark` (see harness.ts) and
 * list it below. Benchmarks are never part of `npm test`.
 */
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { availableParallelism } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { approvalsBenchmark } from "./approvals.bench.ts";
import { executorBenchmark } from "./executor.bench.ts";
import { fleetBenchmark } from "./fleet.bench.ts";
import { type Benchmark, type BenchRow, mergeRuns } from "./harness.ts";
import { hostsBenchmark } from "./hosts.bench.ts";
import { isolatesBenchmark } from "./isolates.bench.ts";
import { loadBenchmark } from "./load.bench.ts";
import { memoryBenchmark } from "./memory.bench.ts";
import { peersBenchmark } from "./peers.bench.ts";
import { lineChartSvg, seriesCharts } from "./plot.ts";
import { quickjsBenchmark } from "./quickjs.bench.ts";
import { redisBenchmark } from "./redis.bench.ts";
import { replayBenchmark } from "./replay.bench.ts";
import { runtimeBenchmark } from "./runtime.bench.ts";
import { storesBenchmark } from "./stores.bench.ts";
import { tokensBenchmark } from "./tokens.bench.ts";

const BENCHMARKS: Benchmark[] = [
  // First, in a process nothing ran in yet: later in the run, what the benchmarks before it left
  // in this process (QuickJS module instances, peers' packages, warm isolates, a larger heap)
  // slowed A by half and the runtime's side of a sandbox process's pass more than the inline
  // host's whole pass (warm pass 1.55× in the full run of 3021588, 1.20–1.25× run alone).
  hostsBenchmark,
  executorBenchmark,
  runtimeBenchmark,
  peersBenchmark,
  // After peers: its targets compare with @ai-sdk/code-mode's rows of the same run.
  quickjsBenchmark,
  replayBenchmark,
  approvalsBenchmark,
  redisBenchmark,
  storesBenchmark,
  isolatesBenchmark,
  fleetBenchmark,
  memoryBenchmark,
  loadBenchmark,
  tokensBenchmark,
];

const RESULTS_FILE = fileURLToPath(new URL("./RESULTS.md", import.meta.url));

function formatNumber(value: number, unit: BenchRow["unit"]): string {
  if (unit === "/s") return Math.round(value).toLocaleString("en-US");
  if (unit === "B") return Math.round(value).toLocaleString("en-US");
  if (unit === "MB") return value.toFixed(1);
  if (Math.abs(value) >= 100) return value.toFixed(0);
  if (Math.abs(value) >= 10) return value.toFixed(1);
  return value.toFixed(2);
}

const HEADERS = ["benchmark", "subject", "median", "p90", "ratio", "min–max (runs)", "target", "n"];

/** The spread over runs: of the ratios when the row has one, else of the medians. */
function spread(row: BenchRow): string {
  if (!row.runs) return "";
  const { count, median, ratio } = row.runs;
  const range = ratio
    ? `${ratio.min.toFixed(2)}–${ratio.max.toFixed(2)}×`
    : `${formatNumber(median.min, row.unit)}–${formatNumber(median.max, row.unit)} ${row.unit}`;
  return Number.isFinite(ratio ? ratio.min : median.min) ? `${range} (${count} runs)` : "";
}

function cells(row: BenchRow): string[] {
  return [
    row.benchmark,
    row.subject,
    `${formatNumber(row.median, row.unit)} ${row.unit}`,
    row.p90 === undefined ? "" : `${formatNumber(row.p90, row.unit)} ${row.unit}`,
    row.ratio === undefined ? "" : `${row.ratio.toFixed(2)}× ${row.versus ?? ""}`.trim(),
    spread(row),
    row.target ?? "",
    row.samples === undefined ? "" : String(row.samples),
  ];
}

function textTable(rows: BenchRow[]): string {
  const body = rows.map(cells);
  const widths = HEADERS.map((header, column) => Math.max(header.length, ...body.map((line) => line[column]!.length)));
  const line = (values: string[]) =>
    values
      .map((value, column) => value.padEnd(widths[column]!))
      .join("  ")
      .trimEnd();
  return [line(HEADERS), widths.map((width) => "-".repeat(width)).join("  "), ...body.map(line)].join("\n");
}

function markdownTable(rows: BenchRow[]): string {
  const line = (values: string[]) => `| ${values.map((value) => value.replaceAll("|", "\\|")).join(" | ")} |`;
  return [line(HEADERS), line(HEADERS.map(() => "---")), ...rows.map((row) => line(cells(row)))].join("\n");
}

/** The commit measured, with "+ local changes" when the work tree differs from it. */
function revision(): string {
  try {
    const commit = execFileSync("git", ["rev-parse", "--short", "HEAD"], { encoding: "utf8" }).trim();
    const dirty =
      execFileSync("git", ["status", "--porcelain", "--untracked-files=no"], { encoding: "utf8" }).trim() !== "";
    return dirty ? `${commit} + local changes` : commit;
  } catch {
    return "unknown";
  }
}

function machine(): { nproc: string; cpu: string; node: string; isolatedVm: string } {
  let nproc: string;
  try {
    nproc = execFileSync("nproc", { encoding: "utf8" }).trim();
  } catch {
    nproc = String(availableParallelism());
  }
  let cpu = "unknown";
  try {
    const match = /^model name\s*:\s*(.+)$/m.exec(readFileSync("/proc/cpuinfo", "utf8"));
    if (match) cpu = match[1]!.trim();
  } catch {
    // Not Linux.
  }
  const require = createRequire(import.meta.url);
  const isolatedVm = (require("isolated-vm/package.json") as { version: string }).version;
  return { nproc, cpu, node: process.version, isolatedVm };
}

async function main(): Promise<void> {
  const selected = process.argv.slice(2);
  const unknown = selected.filter((name) => !BENCHMARKS.some((benchmark) => benchmark.name === name));
  if (unknown.length > 0) {
    throw new Error(
      `unknown benchmark ${unknown.join(", ")}; known: ${BENCHMARKS.map((benchmark) => benchmark.name).join(", ")}`,
    );
  }
  const toRun =
    selected.length === 0 ? BENCHMARKS : BENCHMARKS.filter((benchmark) => selected.includes(benchmark.name));
  const info = machine();
  console.log(`node ${info.node}, isolated-vm ${info.isolatedVm}, ${info.nproc} CPUs (${info.cpu})\n`);

  const started = Date.now();
  const rows: BenchRow[] = [];
  const sections: string[] = [];
  for (const benchmark of toRun) {
    const benchmarkStarted = Date.now();
    const repeat = benchmark.repeat ?? 1;
    process.stdout.write(`${benchmark.name}: ${benchmark.description} ... `);
    const runs: BenchRow[][] = [];
    for (let run = 0; run < repeat; run++) runs.push(await benchmark.run());
    rows.push(...mergeRuns(runs));
    const report = benchmark.report?.();
    if (report) sections.push(`## ${benchmark.section ?? benchmark.name}\n\n${report}\n`);
    console.log(`${repeat > 1 ? `${repeat} runs, ` : ""}${((Date.now() - benchmarkStarted) / 1000).toFixed(1)} s`);
  }
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  console.log(`\n${textTable(rows)}\n`);
  for (const section of sections) console.log(section);

  if (selected.length > 0) {
    console.log(`(only ${selected.join(", ")} ran: ${RESULTS_FILE} and the plots left as they were)`);
    return;
  }
  const charts = seriesCharts(rows);
  for (const { file, chart } of charts) writeFileSync(join(dirname(RESULTS_FILE), file), lineChartSvg(chart));
  const plots = charts.map(({ file, chart }) => `![${chart.title}](${file})`).join("\n\n");
  console.log("profiling the main thread (bench/profile.ts) ...");
  const profiles = execFileSync(process.execPath, [fileURLToPath(new URL("./profile.ts", import.meta.url))], {
    encoding: "utf8",
    maxBuffer: 16 * 1024 * 1024,
  });
  const report = `# Benchmark results

Latest run of \`npm run bench\` (this file is rewritten on every full run).

- date: ${new Date().toISOString()}
- commit: ${revision()}
- node: ${info.node}, isolated-vm ${info.isolatedVm}
- machine: nproc ${info.nproc}, CPU ${info.cpu}
- benchmarks took ${seconds} s

${markdownTable(rows)}

How to read it: every ratio is this row's median over the median of the baseline named after
the ×, measured interleaved in the same process (SPEC §15); lower is better. "A" is a bare
isolated-vm run of the same program (fresh isolate + context + compile + run, host functions via
\`applySyncPromise\`, dispose). "S" is one Redis \`SET\` of a log-entry-sized value on a plain node-redis
client, awaited in a loop (bench/redis.bench.ts; needs Redis). Per-call rows are (pass with N calls − pass with 0 calls) / N; their
p90 is the p90 of the N-call passes minus the median of the 0-call passes, over N. The targets
are for the durable path (executor + log store); the executor rows are the sandbox alone, the
floor the durable path builds on. The programs' reads are declared \`readOnly\` (one log write per
call); rows for a tool that may change things (two writes) stand beside them. The peers
(\`@utcp/code-mode\`, \`@ai-sdk/code-mode\`) run the same programs in their own processes, with A
measured around them (bench/peers.bench.ts); they keep no log. The QuickJS rows (\`executor: "quickjs"\`,
bench/quickjs.bench.ts) have A measured beside them; their targets name @ai-sdk/code-mode's ratio
from the peers rows of this run and say whether they are met, and their replay rate is also put
against the isolated-vm runtime measured beside it ("× isolated-vm"). The host-mode rows
(bench/hosts.bench.ts) run passes in sandbox processes (the default \`sandboxHost\`), on sandbox
threads and on the runtime's thread, with A measured in the same run; their targets for the default
host are against the inline host's rows of this run. Every other runtime row pins its host: the
runtime's thread (\`sandboxHost: "inline"\`, "inline host") unless its subject names threads, so
those rows measure what they did before sandbox processes became the default. Ratios move from run
to run on this VM (cross-thread wake-up latency varies): about ±0.1× for the cold pass and ±0.2× per call.

Rows with a "min–max (runs)" entry come from a benchmark run several times over (its \`repeat\`,
see bench/harness.ts): their median, p90 and ratio are the medians of the runs' own figures, n
counts the samples of all runs together, and min–max is the lowest and highest of the runs'
ratios (of their medians, for rows without a ratio). Rows without it are from a single run.

## Scaling series

One line per store or subject, y = the row's median; a bar spans the runs' min–max where the
benchmark was repeated. Replay is linear when the approve time grows as a straight line with
the recorded calls; store size should leave execute flat; concurrency shows executions per
second as more run at once.

${plots}

${sections.join("\n")}
## Where the time goes (CPU profiles)

Main-thread CPU profiles taken right after the benchmarks by bench/profile.ts (V8's sampling
profiler through \`node:inspector\`, 100 µs interval), self time grouped by what the code does.
The isolate runs on isolated-vm's own threads: on the main thread that shows as waiting. Read
with docs/performance.md, which says what each share is and what would close each gap.

${profiles}`;
  writeFileSync(RESULTS_FILE, report);
  console.log(`wrote ${RESULTS_FILE} and ${charts.map(({ file }) => file).join(", ")}`);
}

await main();
