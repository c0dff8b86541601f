/**
 * Peer code-mode libraries on the same programs, beside the runtime's rows: @utcp/code-mode
 * (isolated-vm 6) and @ai-sdk/code-mode (QuickJS in worker threads). Neither keeps a durable log.
 *
 * Each peer runs in a child process of its own (bench/peers/*-runner.ts): isolated-vm 6 and 7
 * cannot load in one process. Baseline A runs here, before and after each child, and its samples
 * are pooled, so a peer's ratio is against A measured around it on the same machine.
 *
 * The peers are dev dependencies of bench/peers/package.json only, installed on first use with
 * `npm ci --prefix bench/peers` (the root `npm ci` does not build a second isolated-vm).
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { bareIsolatedVm } from "./baselines.ts";
import { type Benchmark, type BenchRow, check, perCallCost, sampleInterleaved, stats } from "./harness.ts";
import type { RunnerOptions, RunnerReport } from "./peers/runner.ts";
import { type BenchProgram, fiveReadsOneWrite, sequentialCalls } from "./programs.ts";

const PEERS_DIRECTORY = fileURLToPath(new URL("./peers/", import.meta.url));
const OPTIONS: RunnerOptions = { coldRuns: 200, callRuns: 30, calls: 1_000 };
/** Row names shared with runtime.bench.ts, so the peers' rows sit beside the runtime's. */
const COLD_PASS = "durable cold pass: 5 reads + 1 write (in-memory store)";
const PER_CALL = `durable per connector call (${OPTIONS.calls} sequential awaits, in-memory store)`;

interface Peer {
  library: string;
  runner: string;
  /** Node flags the child needs. */
  nodeOptions: string[];
  /** How its runner departs from the programs or the library's defaults, for the row. */
  adaptations: string;
}

const PEERS: Peer[] = [
  {
    library: "@utcp/code-mode",
    runner: "utcp-runner.ts",
    nodeOptions: ["--no-node-snapshot"],
    adaptations: "direct-call tools",
  },
  {
    library: "@ai-sdk/code-mode",
    runner: "ai-sdk-runner.ts",
    nodeOptions: [],
    adaptations: `tools.crm_getCustomer spelling, maxBridgeRequests ${OPTIONS.calls}`,
  },
];

/** Why the peers cannot run, or undefined once bench/peers/node_modules holds the versions bench/peers/package.json pins. */
function installPeers(): string | undefined {
  const pinned = (
    JSON.parse(readFileSync(`${PEERS_DIRECTORY}package.json`, "utf8")) as { devDependencies: Record<string, string> }
  ).devDependencies;
  const installed = (name: string) => {
    const path = `${PEERS_DIRECTORY}node_modules/${name}/package.json`;
    return existsSync(path) ? (JSON.parse(readFileSync(path, "utf8")) as { version: string }).version : undefined;
  };
  if (Object.entries(pinned).every(([name, version]) => installed(name) === version)) return undefined;
  // Inherits the environment: scripts/use-node24.sh's npm_config_nodedir builds isolated-vm 6 for this Node.
  const result = spawnSync("npm", ["ci", "--prefix", PEERS_DIRECTORY, "--no-audit", "--no-fund"], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  });
  if (result.status === 0) return undefined;
  const output = `${result.error?.message ?? ""}\n${result.stderr ?? ""}`.trim().split("\n");
  return `npm ci --prefix bench/peers failed: ${output.slice(-3).join(" | ")}`;
}

/** Runs a peer's runner in a child process and reads its report from file descriptor 3. */
function runPeer(peer: Peer): Promise<RunnerReport> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...peer.nodeOptions, peer.runner, JSON.stringify(OPTIONS)], {
      cwd: PEERS_DIRECTORY,
      // stdout carries the libraries' own per-call logging: dropped, as a quiet server would.
      stdio: ["ignore", "ignore", "pipe", "pipe"],
    });
    const report: Buffer[] = [];
    const errors: Buffer[] = [];
    child.stdio[3]!.on("data", (chunk: Buffer) => report.push(chunk));
    child.stderr!.on("data", (chunk: Buffer) => errors.push(chunk));
    child.on("error", reject);
    child.on("close", (code, signal) => {
      if (code === 0) {
        resolve(JSON.parse(Buffer.concat(report).toString("utf8")) as RunnerReport);
        return;
      }
      const lines = Buffer.concat(errors).toString("utf8").trim().split("\n");
      const cause = lines.find((line) => /Error|error:/.test(line)) ?? lines.at(-1) ?? "";
      reject(new Error(`${peer.runner} exited with ${signal ?? code}: ${cause.trim()}`));
    });
  });
}

function bare(program: BenchProgram): () => Promise<void> {
  const run = bareIsolatedVm(program);
  return async () => {
    const value = await run();
    check(value === program.expected, `A returned ${value}, expected ${program.expected}`);
  };
}

type Samples = RunnerReport["samples"];

/**
 * Each peer's ratios to A from the latest run of this benchmark in this process, by library:
 * rows of a later benchmark of the same run compare with them (bench/quickjs.bench.ts).
 */
export const peerRatios = new Map<string, { coldPass: number; perCall: number }>();

/** One sampling of A in this process: cold passes, then passes with and without the calls. */
async function sampleBaseline(into: Samples): Promise<void> {
  const cold = await sampleInterleaved(
    { cold: bare(fiveReadsOneWrite) },
    { warmup: 10, iterations: OPTIONS.coldRuns / 2 },
  );
  const calls = await sampleInterleaved(
    { many: bare(sequentialCalls(OPTIONS.calls)), none: bare(sequentialCalls(0)) },
    { warmup: 2, iterations: OPTIONS.callRuns / 2 },
  );
  into.cold.push(...cold.cold);
  into.many.push(...calls.many);
  into.none.push(...calls.none);
}

/** Per-call µs of (pass with the calls − pass without) / calls (see `perCallCost`). */
function perCall(samples: Samples): { median: number; p90: number; n: number } {
  return perCallCost(samples.many, samples.none, OPTIONS.calls);
}

export const peersBenchmark: Benchmark = {
  name: "peers",
  description: "@utcp/code-mode and @ai-sdk/code-mode on the same programs, each in its own process, against A",
  async run() {
    peerRatios.clear();
    const installError = installPeers();
    const baseline: Samples = { cold: [], many: [], none: [] };
    const results: { peer: Peer; report?: RunnerReport; error?: string }[] = [];
    for (const peer of PEERS) {
      if (installError !== undefined) {
        results.push({ peer, error: installError });
        continue;
      }
      await sampleBaseline(baseline);
      try {
        results.push({ peer, report: await runPeer(peer) });
      } catch (error) {
        results.push({ peer, error: error instanceof Error ? error.message : String(error) });
      }
      await sampleBaseline(baseline);
    }
    if (baseline.cold.length === 0) await sampleBaseline(baseline);

    const a = stats(baseline.cold);
    const aCall = perCall(baseline);
    const coldRows: BenchRow[] = [
      {
        benchmark: COLD_PASS,
        subject: "A: bare isolated-vm, before and after each peer process",
        unit: "ms",
        median: a.median,
        p90: a.p90,
        samples: a.n,
      },
    ];
    const callRows: BenchRow[] = [
      {
        benchmark: PER_CALL,
        subject: "A: applySyncPromise round trip, before and after each peer process",
        unit: "µs",
        median: aCall.median,
        p90: aCall.p90,
        samples: aCall.n,
      },
    ];
    for (const { peer, report, error } of results) {
      if (report === undefined) {
        // A row that says so, rather than no row: the table shows which peer is missing and why.
        const subject = `${peer.library}: could not run (${error})`;
        coldRows.push({ benchmark: COLD_PASS, subject, unit: "ms", median: Number.NaN });
        callRows.push({ benchmark: PER_CALL, subject, unit: "µs", median: Number.NaN });
        continue;
      }
      const subject = `${report.library} ${report.version} (${report.sandbox}, no log; ${peer.adaptations}), own process`;
      const cold = stats(report.samples.cold);
      const call = perCall(report.samples);
      peerRatios.set(peer.library, { coldPass: cold.median / a.median, perCall: call.median / aCall.median });
      coldRows.push({
        benchmark: COLD_PASS,
        subject,
        unit: "ms",
        median: cold.median,
        p90: cold.p90,
        ratio: cold.median / a.median,
        versus: "A",
        samples: cold.n,
      });
      callRows.push({
        benchmark: PER_CALL,
        subject,
        unit: "µs",
        median: call.median,
        p90: call.p90,
        ratio: call.median / aCall.median,
        versus: "A",
        samples: call.n,
      });
    }
    return [...coldRows, ...callRows];
  },
};
