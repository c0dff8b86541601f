/**
 * Sustained load (the issue "the event loop keeps turning"): executions per second with 1, 16 and
 * 100 in flight on the default in-memory store, and the RSS at the end of each series, sampled
 * without forcing a GC. Each series runs in a fresh process (test/load/load-child.ts, the load
 * test's own child: 6 calls per execution, half pausing for an approval given at once, a runaway
 * program every 2 s on a second runtime), so its RSS is its own.
 *
 * For docs/operating.md's memory guidance: the RSS each pass in flight adds, (RSS at 100 − RSS
 * at 1) / 99, and the 100-in-flight series again with `--max-semi-space-size=16` and with jemalloc
 * preloaded (Debian's libjemalloc2; a row says so when it is missing).
 *
 * The child runs its passes on its own thread (`CODEMODE_SANDBOX_HOST=inline`, as before sandbox
 * processes became the default), so the RSS is that of the isolates and the runtime together;
 * bench/hosts.bench.ts measures each host at 1, 16 and 100 in flight, sandbox processes counted.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { LoadReport } from "../test/load/load-child.ts";
import type { Benchmark, BenchRow } from "./harness.ts";

const CHILD = fileURLToPath(new URL("../test/load/load-child.ts", import.meta.url));
const JEMALLOC = "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2";
const MB = 1_000_000;
/** Executions per series: enough for the process to settle, few enough to keep the run short. */
const EXECUTIONS: Record<number, number> = { 1: 600, 16: 2_000, 100: 3_000 };

function runSeries(inFlight: number, nodeArgs: string[] = [], env: NodeJS.ProcessEnv = {}): Promise<LoadReport> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ["--no-node-snapshot", ...nodeArgs, CHILD, "memory", String(EXECUTIONS[inFlight] ?? 2_000), String(inFlight)],
      {
        stdio: ["ignore", "pipe", "pipe"],
        env: { ...process.env, CODEMODE_SANDBOX_HOST: "inline", ...env },
      },
    );
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on("data", (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-4_000);
    });
    child.once("error", reject);
    child.once("close", (code, signal) => {
      const last = stdout.trim().split("\n").at(-1) ?? "";
      if (code !== 0 || !last.startsWith("{"))
        reject(new Error(`load-child.ts (${inFlight} in flight) ended with ${signal ?? code}: ${stderr.trim()}`));
      else resolve(JSON.parse(last) as LoadReport);
    });
  });
}

export const loadBenchmark: Benchmark = {
  name: "load",
  description:
    "sustained load on the default store: executions/s and RSS at 1, 16 and 100 in flight, each series in a fresh process",
  async run() {
    const benchmark = "sustained load, default store, inline host (6 calls, half paused and approved)";
    const memory = "memory under sustained load, 100 in flight, inline host (RSS sampled every 100 ms, no forced GC)";
    const reports = new Map<number, LoadReport>();
    for (const inFlight of [1, 16, 100]) reports.set(inFlight, await runSeries(inFlight));
    const one = reports.get(1)!;
    const rows: BenchRow[] = [];
    for (const [inFlight, report] of reports) {
      rows.push({
        benchmark,
        subject: `${inFlight} in flight: executions per second`,
        unit: "/s",
        median: report.perSecond,
        ratio: report.perSecond / one.perSecond,
        versus: "1 in flight",
        samples: report.executions,
        series: { name: "load", x: inFlight, xLabel: "executions in flight", yLabel: "executions/s" },
      });
      rows.push({
        benchmark,
        subject: `${inFlight} in flight: RSS at the end of the series`,
        unit: "MB",
        median: report.endRssBytes / MB,
        ratio: report.endRssBytes / one.endRssBytes,
        versus: "1 in flight",
      });
      rows.push({
        benchmark,
        subject: `${inFlight} in flight: worst lag of a 100 ms timer`,
        unit: "ms",
        median: report.maxTimerLagMs,
        target: "≤ 1,000 ms",
      });
    }
    const hundred = reports.get(100)!;
    rows.push({
      benchmark: memory,
      subject: "RSS added per pass in flight: (RSS at 100 − RSS at 1) / 99",
      unit: "MB",
      median: (hundred.endRssBytes - one.endRssBytes) / 99 / MB,
    });
    rows.push({
      benchmark: memory,
      subject: "default allocator: peak RSS",
      unit: "MB",
      median: hundred.maxRssBytes / MB,
    });
    const semi = await runSeries(100, ["--max-semi-space-size=16"]);
    rows.push({
      benchmark: memory,
      subject: "--max-semi-space-size=16: peak RSS",
      unit: "MB",
      median: semi.maxRssBytes / MB,
      ratio: semi.maxRssBytes / hundred.maxRssBytes,
      versus: "default",
    });
    rows.push({
      benchmark: memory,
      subject: "--max-semi-space-size=16: executions per second",
      unit: "/s",
      median: semi.perSecond,
      ratio: semi.perSecond / hundred.perSecond,
      versus: "default",
    });
    if (existsSync(JEMALLOC)) {
      const jemalloc = await runSeries(100, [], { LD_PRELOAD: JEMALLOC });
      rows.push({
        benchmark: memory,
        subject: "jemalloc (LD_PRELOAD): peak RSS",
        unit: "MB",
        median: jemalloc.maxRssBytes / MB,
        ratio: jemalloc.maxRssBytes / hundred.maxRssBytes,
        versus: "default",
      });
      rows.push({
        benchmark: memory,
        subject: "jemalloc (LD_PRELOAD): RSS at the end",
        unit: "MB",
        median: jemalloc.endRssBytes / MB,
        ratio: jemalloc.endRssBytes / hundred.endRssBytes,
        versus: "default",
      });
      rows.push({
        benchmark: memory,
        subject: "jemalloc (LD_PRELOAD): executions per second",
        unit: "/s",
        median: jemalloc.perSecond,
        ratio: jemalloc.perSecond / hundred.perSecond,
        versus: "default",
      });
    } else {
      rows.push({
        benchmark: memory,
        subject: `jemalloc: not measured (${JEMALLOC} is missing: apt-get install libjemalloc2)`,
        unit: "MB",
        median: Number.NaN,
      });
    }
    return rows;
  },
};
