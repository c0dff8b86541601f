/**
 * The runtime's process of one containment case (test/containment/*.test.ts), importing the BUILT
 * packages (run `npm run build` first). It creates a runtime with the engine and host it is
 * given, runs hostile programs through it one after another (or all at once, `together`), each
 * followed by a benign pass, samples the lag of a 100 ms interval timer, closes the runtime and
 * calls `process.exit(0)` at once. It reports on stdout, one JSON line per event, as each
 * happens, so that the parent knows how far a process it had to kill got:
 *
 *   echo '{"engine":"quickjs","host":"process","timeoutMs":2000,"memoryMb":64,"runs":[{"name":"…","code":"…"}]}' \
 *     | node --no-node-snapshot test/containment/run-hostile.ts
 *
 * With `cancelAfterMs`, a run is cancelled through `runtime.cancel` that long after it started.
 * With `together` and `closeAfterMs`, the runtime is closed that long after the runs started,
 * while they still run.
 */
import { createCodemodeRuntime, type Outcome } from "@codemode/core";

export interface HostileRunConfig {
  engine: "isolated-vm" | "quickjs";
  host: "process" | "thread" | "inline";
  timeoutMs: number;
  memoryMb: number;
  runs: Array<{ name: string; code: string; cancelAfterMs?: number }>;
  /** Start every run at once (and the benign passes once all have ended) instead of one after another. */
  together?: boolean;
  /** With `together`: close the runtime this long after the runs started, without waiting for them. */
  closeAfterMs?: number;
}

/** How one pass ended, as the report gives it. */
export interface PassReport {
  status: Outcome["status"];
  code?: string;
  /** The first 300 characters of the error. */
  error?: string;
  result?: unknown;
  /** From `execute` to its outcome (ms). */
  ms: number;
}

/** One line of the report; `at` is when it was written (ms since this process started). */
export type HostileEvent = { at?: number } & (
  | { event: "ready" }
  /** A hostile run is about to start (the last one seen is the one a killed process was running). */
  | { event: "start"; name: string }
  | {
      event: "run";
      name: string;
      outcome: PassReport;
      /** What `runtime.cancel` answered and how long it took to answer (ms), for a run cancelled. */
      cancel?: { result: string; ms: number };
      /** The benign pass after it (absent when the runtime was closed under it). */
      benign?: PassReport;
      /** The longest the 100 ms interval timer came late since the previous event (ms). */
      maxLagMs: number;
    }
  /** `await runtime.close()` resolved after `closeMs`; `process.exit(0)` is called right after. */
  | { event: "closed"; closeMs: number; maxLagMs: number }
);

const TICK_MS = 100;
const BENIGN = "async () => 6 * 7";

function say(event: HostileEvent): void {
  process.stdout.write(`${JSON.stringify({ ...event, at: Math.round(performance.now()) })}\n`);
}

function report(outcome: Outcome, ms: number): PassReport {
  return {
    status: outcome.status,
    ...(outcome.status === "error" ? { code: outcome.code, error: outcome.error.slice(0, 300) } : {}),
    ...(outcome.status === "completed" ? { result: outcome.result } : {}),
    ms: Math.round(ms),
  };
}

// The config comes on stdin: crafted programs of a megabyte do not fit in an argument.
let input = "";
for await (const chunk of process.stdin) input += chunk;
const config = JSON.parse(input) as HostileRunConfig;
const runtime = createCodemodeRuntime({
  executor: config.engine,
  sandboxHost: config.host,
  limits: { timeoutMs: config.timeoutMs, memoryMb: config.memoryMb },
  logger: { warn: (message) => process.stderr.write(`${message}\n`) },
});

async function timed(code: string): Promise<PassReport> {
  const started = performance.now();
  const outcome = await runtime.execute({ code });
  return report(outcome, performance.now() - started);
}

let maxLagMs = 0;
let lastTick = performance.now();
const ticker = setInterval(() => {
  const now = performance.now();
  maxLagMs = Math.max(maxLagMs, now - lastTick - TICK_MS);
  lastTick = now;
}, TICK_MS);
/** The longest lag since the last call, the current gap included (a loop held right now counts). */
function takeLag(): number {
  const lag = Math.max(maxLagMs, performance.now() - lastTick - TICK_MS, 0);
  maxLagMs = 0;
  return Math.round(lag);
}

/** Runs one hostile program; with `cancelAfterMs`, cancels it that long after it started. */
async function hostile(run: HostileRunConfig["runs"][number]) {
  say({ event: "start", name: run.name });
  const running = timed(run.code);
  let cancel: { result: string; ms: number } | undefined;
  if (run.cancelAfterMs !== undefined) {
    await new Promise((resolve) => setTimeout(resolve, run.cancelAfterMs));
    const executionId = (await runtime.executions({ status: "running" })).items[0]?.id;
    const asked = performance.now();
    const answer = executionId ? await runtime.cancel({ executionId, by: "containment test" }) : undefined;
    cancel = { result: answer?.result ?? "no running execution", ms: Math.round(performance.now() - asked) };
  }
  return { name: run.name, outcome: await running, ...(cancel ? { cancel } : {}) };
}

async function close(): Promise<never> {
  const closing = performance.now();
  await runtime.close();
  clearInterval(ticker);
  say({ event: "closed", closeMs: Math.round(performance.now() - closing), maxLagMs: takeLag() });
  process.exit(0);
}

// The first passes start the sandbox (a process, a thread, or QuickJS's module here): the
// hostile runs find it warm. On a machine busy with other tests it may take its whole limit.
// Runs that go together find as many processes started as there are runs, as in a pool that has
// served passes together before: a pass's time begins when it is sent to its process (executor.ts
// `startedAt`), so a run that waited for a process to start (a third of a second here) would end
// that much later after `execute`, and what is measured is how the pass ends, not a Node start.
const warmUps = await Promise.all(
  Array.from({ length: config.together ? config.runs.length : 1 }, () => timed(BENIGN)),
);
for (const warmUp of warmUps)
  if (warmUp.status !== "completed")
    throw new Error(`a benign pass to warm up did not complete: ${JSON.stringify(warmUp)}`);
say({ event: "ready" });
takeLag();
if (config.together && config.closeAfterMs !== undefined) {
  for (const run of config.runs) void hostile(run);
  await new Promise((resolve) => setTimeout(resolve, config.closeAfterMs));
  await close();
} else if (config.together) {
  const ended = await Promise.all(config.runs.map(hostile));
  const lag = takeLag();
  for (const run of ended) say({ event: "run", ...run, benign: await timed(BENIGN), maxLagMs: lag });
} else {
  for (const each of config.runs) {
    const run = await hostile(each);
    say({ event: "run", ...run, benign: await timed(BENIGN), maxLagMs: takeLag() });
  }
}
await close();
