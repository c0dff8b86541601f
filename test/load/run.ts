/**
 * The load test (`npm run test:load`, run after `npm test` by .ci/run and the README): one child
 * process per store keeps 100 executions in flight with no pause between them, for 10,000
 * executions, and must hold every bound below. It imports the BUILT packages: run `npm run build` first (CI does).
 *
 *   node test/load/run.ts [--executions N] [--in-flight N] [--stores memory,sqlite,redis]
 *
 * Redis must be reachable at $CODEMODE_REDIS_URL (default redis://127.0.0.1:6379). Outside CI a
 * missing Redis is skipped with the reason printed; in CI it fails.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { tcpUnreachable } from "@codemode/storage/testing";
import type { LoadReport } from "./load-child.ts";

const { values } = parseArgs({
  options: {
    executions: { type: "string", default: "10000" },
    "in-flight": { type: "string", default: "100" },
    stores: { type: "string", default: "memory,sqlite,redis" },
  },
});
const executions = Number(values.executions);
const inFlight = Number(values["in-flight"]);
const redisUrl = process.env.CODEMODE_REDIS_URL ?? "redis://127.0.0.1:6379";

const MB = 1024 * 1024;
/** The bounds a busy server must hold (issue: sustained load). */
const BOUNDS = {
  rssBytes: 1024 * MB,
  timerLagMs: 1_000,
  isolatesBeyondPasses: 4,
  runawayMs: 3_000,
};

interface Check {
  name: string;
  ok: boolean;
  detail: string;
}

function checksOf(report: LoadReport): Check[] {
  const runawaysOk =
    report.runaways.length > 0 &&
    report.runaways.every((runaway) => runaway.code === "TIMEOUT" && runaway.ms <= BOUNDS.runawayMs);
  return [
    {
      name: "every execution completed",
      ok: report.failures.length === 0,
      detail: report.failures[0] ?? `${report.executions} completed`,
    },
    {
      name: `RSS stays under ${BOUNDS.rssBytes / MB} MB`,
      ok: report.maxRssBytes < BOUNDS.rssBytes,
      detail: `at most ${Math.round(report.maxRssBytes / MB)} MB (the runtime's process at most ${Math.round(report.maxRuntimeRssBytes / MB)} MB, its sandbox processes ${Math.round(report.maxSandboxRssBytes / MB)} MB), ${Math.round(report.endRssBytes / MB)} MB at the end`,
    },
    {
      name: `a 100 ms timer never lags more than ${BOUNDS.timerLagMs} ms`,
      ok: report.maxTimerLagMs <= BOUNDS.timerLagMs,
      detail: `worst lag ${Math.round(report.maxTimerLagMs)} ms over ${report.samples} samples`,
    },
    {
      // Warm isolates stay idle between passes (isolateReuse), as many as ran at once lately in
      // the same sandbox host: what must never pile up is isolates beyond the most passes that
      // ever ran at once there.
      name: `isolates alive in each sandbox host never exceed the most passes running there at once by more than ${BOUNDS.isolatesBeyondPasses}`,
      ok:
        report.hosts.length > 0 &&
        report.hosts.every((host) => host.maxIsolatesLive <= host.maxPassesRunning + BOUNDS.isolatesBeyondPasses) &&
        report.samples > 0,
      detail: `${report.hosts.length} host(s), ${report.hosts.map((host) => `at most ${host.maxIsolatesLive} alive with up to ${host.maxPassesRunning} running`).join("; ")}; over all, ${report.maxIsolatesLive} alive at most with up to ${report.maxPassesRunning} running`,
    },
    {
      name: `a runaway program with timeoutMs 1000 ends TIMEOUT within ${BOUNDS.runawayMs} ms`,
      ok: runawaysOk,
      detail: runawayDetail(report.runaways),
    },
  ];
}

function runawayDetail(runaways: LoadReport["runaways"]): string {
  if (runaways.length === 0) return "none ran";
  const codes = [...new Set(runaways.map((runaway) => runaway.code))].join(", ");
  return `${runaways.length} runaways ended ${codes}, the slowest after ${Math.max(...runaways.map((runaway) => runaway.ms))} ms`;
}

function runChild(
  store: string,
  target: string | undefined,
): Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }> {
  const child = spawn(
    process.execPath,
    [
      "--no-node-snapshot",
      join(import.meta.dirname, "load-child.ts"),
      store,
      String(executions),
      String(inFlight),
      ...(target ? [target] : []),
    ],
    {
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk) => {
    stdout += chunk;
  });
  child.stderr.on("data", (chunk) => {
    stderr = (stderr + chunk).slice(-20_000);
  });
  return new Promise((resolve) => child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr })));
}

let passed = 0;
let failed = 0;
let skipped = 0;
const folder = mkdtempSync(join(tmpdir(), "codemode-load-"));
try {
  for (const store of values.stores.split(",")) {
    let target: string | undefined;
    if (store === "sqlite") target = join(folder, "load.sqlite");
    if (store === "redis") {
      const unreachable = await tcpUnreachable(redisUrl);
      if (unreachable) {
        if (process.env.CI)
          throw new Error(`Redis is not reachable at ${redisUrl} (${unreachable}); CI must provide it`);
        console.log(`load ${store}: skipped, Redis is not reachable at ${redisUrl} (${unreachable})`);
        skipped++;
        continue;
      }
      target = redisUrl;
    }
    console.log(`load ${store}: ${executions} executions, ${inFlight} in flight…`);
    const result = await runChild(store, target);
    const line = result.stdout.trim().split("\n").at(-1) ?? "";
    if (result.code !== 0 || !line.startsWith("{")) {
      console.log(
        `  ✗ the process ended with ${result.signal ?? `exit code ${result.code}`}\n${result.stdout.slice(-2_000)}\n${result.stderr.slice(-4_000)}`,
      );
      failed++;
      continue;
    }
    const report = JSON.parse(line) as LoadReport;
    console.log(`  ${report.perSecond} executions/s over ${report.seconds.toFixed(1)} s`);
    for (const check of checksOf(report)) {
      console.log(`  ${check.ok ? "✓" : "✗"} ${check.name}: ${check.detail}`);
      if (check.ok) passed++;
      else failed++;
    }
  }
} finally {
  rmSync(folder, { recursive: true, force: true });
}
console.log(`load: ${passed} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ""}`);
process.exitCode = failed > 0 ? 1 : 0;
