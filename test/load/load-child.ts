/**
 * One process under sustained load, for test/load/run.ts, importing the BUILT packages:
 *
 *   node --no-node-snapshot test/load/load-child.ts <memory|sqlite|redis> <executions> <in flight> [<file or url>]
 *
 * It keeps `in flight` executions running with no pause between them, until `executions` have
 * completed: 6 calls each, half of them pausing for an approval that is given at once. While the
 * load runs it samples, every 100 ms of a timer, how late that timer fired, the RSS (read, never
 * after a forced GC; with sandbox processes, theirs counted too), and the isolates not yet
 * disposed against the passes running; and every 2 s it starts a runaway program with a 1 s limit
 * on a second runtime over the same store.
 *
 * Passes run on the default host, sandbox processes (R-SB-8); `CODEMODE_SANDBOX_HOST=inline` runs
 * them on this thread, as before there were sandbox processes.
 *
 * Prints one line of JSON (see `LoadReport`). Exits 1 when a run ended otherwise than completed;
 * an abort of the process shows in its exit code.
 */
import { createCodemodeRuntime, defineConnector, type Outcome } from "@codemode/core";
import { createIsolatedVmExecutor, createProcessExecutor } from "@codemode/core/sandbox";
import type { CodemodeStorage } from "@codemode/storage";

export interface LoadReport {
  store: string;
  executions: number;
  inFlight: number;
  seconds: number;
  /** Executions completed per second over the whole load. */
  perSecond: number;
  maxTimerLagMs: number;
  /** The runtime's process and its sandbox processes together. */
  maxRssBytes: number;
  endRssBytes: number;
  /** The runtime's process alone, and its sandbox processes alone (0 with passes on this thread). */
  maxRuntimeRssBytes: number;
  maxSandboxRssBytes: number;
  /** The largest excess of isolates not yet disposed over passes running, in any sample. */
  maxIsolatesBeyondPasses: number;
  /** Most isolates alive at once (running a pass, or warm and idle), over every sandbox host. */
  maxIsolatesLive: number;
  maxPassesRunning: number;
  /**
   * Per sandbox host (each sandbox process, or this process with passes on this thread): the
   * most isolates alive and the most passes running there at once. Warm isolates are kept per
   * host, as many as ran there at once lately.
   */
  hosts: Array<{ maxIsolatesLive: number; maxPassesRunning: number }>;
  samples: number;
  /** Each runaway's outcome code and how long after its start the outcome came, in ms. */
  runaways: Array<{ code: string; ms: number }>;
  failures: string[];
}

const [store = "memory", executionsText = "10000", inFlightText = "100", target] = process.argv.slice(2);
const executions = Number(executionsText);
const inFlight = Number(inFlightText);
if (
  !["memory", "sqlite", "redis"].includes(store) ||
  !Number.isSafeInteger(executions) ||
  !Number.isSafeInteger(inFlight)
) {
  throw new Error("usage: load-child.ts <memory|sqlite|redis> <executions> <in flight> [<file or url>]");
}

const shop = defineConnector({
  name: "shop",
  tools: {
    price: { readOnly: true, execute: async (args: { sku: number }) => ({ sku: args.sku, cents: 100 + args.sku }) },
    reserve: { execute: async (args: { total: number }) => ({ reserved: args.total }) },
    order: { requiresApproval: true, execute: async (args: { total: number }) => ({ orderId: `o-${args.total}` }) },
  },
});
// Six calls each: five lookups and a write, or four lookups, a write and an order that pauses.
const quote =
  "async () => { let total = 0; for (let sku = 0; sku < 5; sku++) total += (await shop.price({ sku })).cents; return (await shop.reserve({ total })).reserved; }";
const buy =
  "async () => { let total = 0; for (let sku = 0; sku < 4; sku++) total += (await shop.price({ sku })).cents; await shop.reserve({ total }); return (await shop.order({ total })).orderId; }";

async function openStorage(): Promise<CodemodeStorage | undefined> {
  if (store === "sqlite")
    return (await import("@codemode/storage/sqlite")).sqliteStorage(target ?? ".codemode/load.sqlite");
  if (store === "redis")
    return (await import("@codemode/storage/redis")).redisStorage(target ?? "redis://127.0.0.1:6379", {
      namespace: `load-${process.pid}`,
    });
  return undefined;
}

const storage = await openStorage();
/** What the sampler reads of each sandbox host: passes running, isolates alive, and its memory (0 for this process). */
interface Sampled {
  host: string;
  passesRunning: number;
  isolatesLive: number;
  rssBytes: number;
}
const inline = process.env.CODEMODE_SANDBOX_HOST === "inline";
const isolatedVm = inline ? createIsolatedVmExecutor() : undefined;
const processes = inline ? undefined : createProcessExecutor();
const executor = isolatedVm ?? processes!;
async function sample(): Promise<Sampled[]> {
  if (isolatedVm) return [{ host: "this process", ...isolatedVm.stats(), rssBytes: 0 }];
  const stats = await processes!.stats();
  return stats.perProcess.map((each) => ({
    host: String(each.pid),
    passesRunning: each.passesRunning,
    isolatesLive: each.sandboxesLive,
    rssBytes: each.rssBytes,
  }));
}
const hosts = new Map<string, { maxIsolatesLive: number; maxPassesRunning: number }>();
const runtime = createCodemodeRuntime({
  connectors: [shop],
  executor,
  maxExecutions: 200,
  ...(storage ? { storage } : {}),
});
// The runaways share the store (and, for the default store, nothing else: it is in this process).
// Their runtime has its own name: with the default retention of 50 it would otherwise prune the
// load's executions, which are kept under another limit.
const guard = createCodemodeRuntime({
  connectors: [shop],
  name: "runaways",
  limits: { timeoutMs: 1_000 },
  ...(storage ? { storage } : {}),
});

const report: LoadReport = {
  store,
  executions,
  inFlight,
  seconds: 0,
  perSecond: 0,
  maxTimerLagMs: 0,
  maxRssBytes: 0,
  endRssBytes: 0,
  maxRuntimeRssBytes: 0,
  maxSandboxRssBytes: 0,
  hosts: [],
  maxIsolatesBeyondPasses: 0,
  maxIsolatesLive: 0,
  maxPassesRunning: 0,
  samples: 0,
  runaways: [],
  failures: [],
};

let last = performance.now();
const sampler = setInterval(() => {
  const now = performance.now();
  report.maxTimerLagMs = Math.max(report.maxTimerLagMs, now - last - 100);
  last = now;
  const rss = process.memoryUsage.rss();
  void sample().then((sampled) => {
    const sum = (pick: (each: Sampled) => number) => sampled.reduce((total, each) => total + pick(each), 0);
    const passesRunning = sum((each) => each.passesRunning);
    const isolatesLive = sum((each) => each.isolatesLive);
    const sandboxRss = sum((each) => each.rssBytes);
    for (const each of sampled) {
      const seen = hosts.get(each.host) ?? { maxIsolatesLive: 0, maxPassesRunning: 0 };
      seen.maxIsolatesLive = Math.max(seen.maxIsolatesLive, each.isolatesLive);
      seen.maxPassesRunning = Math.max(seen.maxPassesRunning, each.passesRunning);
      hosts.set(each.host, seen);
    }
    report.maxIsolatesBeyondPasses = Math.max(report.maxIsolatesBeyondPasses, isolatesLive - passesRunning);
    report.maxIsolatesLive = Math.max(report.maxIsolatesLive, isolatesLive);
    report.maxPassesRunning = Math.max(report.maxPassesRunning, passesRunning);
    report.maxRuntimeRssBytes = Math.max(report.maxRuntimeRssBytes, rss);
    report.maxSandboxRssBytes = Math.max(report.maxSandboxRssBytes, sandboxRss);
    report.maxRssBytes = Math.max(report.maxRssBytes, rss + sandboxRss);
    report.samples++;
  });
}, 100);

const runaways: Array<Promise<void>> = [];
const runawayTimer = setInterval(() => {
  const started = performance.now();
  runaways.push(
    guard.execute({ code: "async () => { await shop.price({ sku: 1 }); while (true) {} }" }).then((outcome) => {
      report.runaways.push({
        code: outcome.status === "error" ? outcome.code : outcome.status,
        ms: Math.round(performance.now() - started),
      });
    }),
  );
}, 2_000);

let started = 0;
async function lane(): Promise<void> {
  while (started < executions) {
    const number = started++;
    let outcome: Outcome = await runtime.execute({ code: number % 2 === 0 ? quote : buy });
    while (outcome.status === "paused")
      outcome = await runtime.approve({ executionId: outcome.executionId, by: "load" });
    if (outcome.status !== "completed" && report.failures.length < 10)
      report.failures.push(JSON.stringify(outcome).slice(0, 500));
  }
}

const began = performance.now();
await Promise.all(Array.from({ length: inFlight }, lane));
report.seconds = (performance.now() - began) / 1000;
report.perSecond = Math.round(executions / report.seconds);
report.endRssBytes = process.memoryUsage.rss() + (processes ? (await processes.stats()).rssBytes : 0);
report.hosts = [...hosts.values()];
clearInterval(runawayTimer);
await Promise.all(runaways);
clearInterval(sampler);
await guard.close();
await runtime.close();
await storage?.close();
console.log(JSON.stringify(report));
process.exitCode = report.failures.length > 0 ? 1 : 0;
