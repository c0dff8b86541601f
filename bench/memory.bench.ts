/**
 * Host memory held by paused executions (issue target: no host memory per paused execution
 * beyond its index entry). Each store runs in a fresh child process (bench/memory-child.ts, with
 * `--expose-gc`), so RSS belongs to that run alone: a warm runtime; 100 executions started at
 * once, each running until it pauses on a `requiresApproval` tool (peak RSS sampled meanwhile,
 * and the kernel's high-water mark); 900 more; then all of them approved or rejected and pruned.
 *
 * The figure that answers the target is heapUsed + external: what JavaScript objects and the
 * buffers they own take after `gc()`. Per paused execution it is the growth from 100 to 1,000
 * paused, over 900, read twice: with the host idle since the pauses, and after one more pass.
 * The difference is what the last passes leave reachable until isolated-vm next runs on this
 * thread (it frees the host functions of a disposed isolate's callbacks only then); the row
 * "held until the next pass" shows it per execution. On the memory store the growth is the store
 * itself, shown beside the characters its entries take. RSS is reported too, but it follows the
 * isolates the process has run (executions that complete instead of pausing grow it as much), not
 * the executions paused now: it does not fall when they end.
 *
 * Passes run on the child's own thread (`sandboxHost: "inline"`, as before sandbox processes
 * became the default), so the isolates are in the RSS read; bench/hosts.bench.ts reads the RSS
 * of each host, sandbox processes counted.
 *
 * SQLite writes to a file in a temporary folder, Redis (at $CODEMODE_REDIS_URL, default
 * redis://127.0.0.1:6379) under a namespace of its own; both are removed afterwards. A Redis that
 * cannot be reached gives one row saying so. MB here are 10⁶ bytes.
 */
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { tcpUnreachable } from "@codemode/storage/testing";
import { createClient } from "@keyv/redis";
import type { Benchmark, BenchRow } from "./harness.ts";
import type { MemoryReport, MemorySnapshot, StoreKind } from "./memory-child.ts";

const REDIS_URL = process.env.CODEMODE_REDIS_URL ?? "redis://127.0.0.1:6379";
const CHILD = fileURLToPath(new URL("./memory-child.ts", import.meta.url));
const MB = 1_000_000;
const TARGET = "≈ 0 beyond the index entry";

/** Runs one store's story in a child process and returns its report. */
function runChild(kind: StoreKind, where?: string): Promise<MemoryReport> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--expose-gc", CHILD, kind, ...(where === undefined ? [] : [where])], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.once("error", reject);
    child.once("close", (code) => {
      const last = stdout.trim().split("\n").at(-1) ?? "";
      if (code !== 0 || !last.startsWith("{"))
        reject(new Error(`memory-child.ts ${kind} exited with ${code}: ${stderr.trim().slice(-2_000)}`));
      else resolve(JSON.parse(last) as MemoryReport);
    });
  });
}

const held = (snapshot: MemorySnapshot) => snapshot.heapUsed + snapshot.external;

function rowsOf(label: string, report: MemoryReport): BenchRow[] {
  const benchmark = `host memory of paused executions (${label}, inline host)`;
  const { firstWave, totalPaused, warm } = report;
  const later = totalPaused - firstWave;
  const total = totalPaused.toLocaleString("en-US");
  const rss = (subject: string, bytes: number): BenchRow => ({
    benchmark,
    subject,
    unit: "MB",
    median: bytes / MB,
    ratio: bytes / warm.rss,
    versus: "warm",
  });
  const heap = (subject: string, snapshot: MemorySnapshot): BenchRow => ({
    benchmark,
    subject,
    unit: "MB",
    median: held(snapshot) / MB,
    ratio: held(snapshot) / held(warm),
    versus: "warm",
  });
  const perPaused = (before: MemorySnapshot, after: MemorySnapshot) => (held(after) - held(before)) / later;
  const stored =
    report.storedChars100 !== undefined && report.storedChars1000 !== undefined
      ? (report.storedChars1000 - report.storedChars100) / later
      : undefined;
  const target = stored === undefined ? TARGET : `≈ what the store holds (${Math.round(stored)} B)`;
  const rows: BenchRow[] = [
    { benchmark, subject: "RSS, warm runtime, none paused", unit: "MB", median: warm.rss / MB },
    rss(`peak RSS, ${firstWave} running until paused (sampled every ${report.sampleMs} ms)`, report.peakRssSampled),
    rss(`peak RSS, ${firstWave} running until paused (getrusage maxRSS)`, report.peakRssKernel),
    rss(`RSS, settled, ${firstWave} paused`, report.paused100.rss),
    rss(`RSS, settled, ${total} paused`, report.paused1000.rss),
    rss(`RSS, all ${total} approved or rejected, then pruned`, report.decided.rss),
    { benchmark, subject: "heapUsed + external, warm runtime, none paused", unit: "MB", median: held(warm) / MB },
    heap(`heapUsed + external, settled, ${firstWave} paused`, report.paused100),
    heap(`heapUsed + external, settled, ${total} paused`, report.paused1000),
    heap(`heapUsed + external, all ${total} approved or rejected, then pruned`, report.decided),
    {
      benchmark,
      subject: `host bytes per paused execution (${total} vs ${firstWave}), host idle since they paused`,
      unit: "B",
      median: perPaused(report.paused100, report.paused1000),
      target,
      samples: later,
    },
    {
      benchmark,
      subject: `host bytes per paused execution (${total} vs ${firstWave}), after one more pass`,
      unit: "B",
      median: perPaused(report.paused100AfterPass, report.paused1000AfterPass),
      target,
      samples: later,
    },
    {
      benchmark,
      subject: `host bytes per paused execution held until the next pass (${firstWave} paused)`,
      unit: "B",
      median: (held(report.paused100) - held(report.paused100AfterPass)) / firstWave,
      target: "≈ 0",
      samples: firstWave,
    },
  ];
  if (stored !== undefined)
    rows.push({
      benchmark,
      subject: "stored per paused execution: characters of its keys and values in the store",
      unit: "B",
      median: stored,
      samples: later,
    });
  return rows;
}

async function measureRedis(): Promise<BenchRow[]> {
  const reason = await tcpUnreachable(REDIS_URL);
  if (reason !== undefined)
    return [
      {
        benchmark: "host memory of paused executions (Redis)",
        subject: `not measured: ${reason}`,
        unit: "MB",
        median: Number.NaN,
      },
    ];
  const namespace = `codemode-bench-memory-${randomUUID().slice(0, 8)}`;
  try {
    return rowsOf("Redis", await runChild("redis", namespace));
  } finally {
    const client = createClient({ url: REDIS_URL });
    await client.connect();
    try {
      const keys = await client.keys(`${namespace}*`);
      for (let start = 0; start < keys.length; start += 1_000) await client.del(keys.slice(start, start + 1_000));
    } finally {
      await client.close();
    }
  }
}

async function measureSqlite(): Promise<BenchRow[]> {
  const folder = mkdtempSync(join(tmpdir(), "codemode-bench-memory-"));
  try {
    return rowsOf("SQLite", await runChild("sqlite", join(folder, "memory.sqlite")));
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

export const memoryBenchmark: Benchmark = {
  name: "memory",
  description:
    "host memory (RSS, heap) of 100 and 1,000 paused executions on Redis, SQLite and the memory store, each in a fresh process",
  async run() {
    return [...rowsOf("memory", await runChild("memory")), ...(await measureSqlite()), ...(await measureRedis())];
  },
};
