/**
 * For the containment suite: starts run-hostile.ts (the runtime's process of a case) and gathers
 * what it reported, how it ended and how long it took to exit once its runtime had closed. A
 * child that reports nothing for longer than its cap is killed and reported `hung`; one that
 * died reports its exit code and signal.
 */
import { spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import type { HostileEvent, HostileRunConfig } from "./run-hostile.ts";

const CHILD = fileURLToPath(new URL("./run-hostile.ts", import.meta.url));
/** What a child may take to start its runtime and run a first benign pass, on a busy machine (ms). */
const START_CAP_MS = 60_000;

export type RunEvent = Extract<HostileEvent, { event: "run" }>;

export interface ChildReport {
  /** Every event the child reported, in order. */
  events: HostileEvent[];
  /** The `run` events alone. */
  runs: RunEvent[];
  /** The name of the last run the child started. */
  lastStarted: string | undefined;
  /** How the child ended: its exit code and signal, or `hung` when the cap ended it. */
  exit: { code: number | null; signal: NodeJS.Signals | null } | "hung";
  /** From the `closed` line to the child's exit (ms), when it closed its runtime. */
  exitAfterCloseMs: number | undefined;
  /** The last characters it wrote on standard error. */
  stderr: string;
}

/**
 * Runs one child with `config` on stdin; kills it when it reports nothing for `capMs` once ready
 * (before, for START_CAP_MS), so each run gets a cap of its own. Never rejects.
 */
export function runHostileChild(config: HostileRunConfig, capMs: number): Promise<ChildReport> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ["--no-node-snapshot", CHILD], { stdio: ["pipe", "pipe", "pipe"] });
    child.stdin.end(JSON.stringify(config));
    const events: HostileEvent[] = [];
    let pending = "";
    let stderr = "";
    let closedAt: number | undefined;
    let hung = false;
    let exited: { code: number | null; signal: NodeJS.Signals | null; at: number } | undefined;
    const kill = () => {
      if (exited) return;
      hung = true;
      child.kill("SIGKILL");
    };
    let cap = setTimeout(kill, START_CAP_MS);
    child.stdout.on("data", (chunk: Buffer) => {
      pending += chunk.toString();
      for (let newline = pending.indexOf("\n"); newline >= 0; newline = pending.indexOf("\n")) {
        const event = JSON.parse(pending.slice(0, newline)) as HostileEvent;
        pending = pending.slice(newline + 1);
        if (event.event === "closed") closedAt = performance.now();
        events.push(event);
        clearTimeout(cap);
        cap = setTimeout(kill, capMs);
      }
    });
    child.stderr.on("data", (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-2_000);
    });
    const finish = () => {
      if (!exited) return;
      clearTimeout(cap);
      resolve({
        events,
        runs: events.filter((event): event is RunEvent => event.event === "run"),
        lastStarted: events.findLast((event) => event.event === "start")?.name,
        exit: hung ? "hung" : { code: exited.code, signal: exited.signal },
        exitAfterCloseMs: closedAt === undefined ? undefined : exited.at - closedAt,
        stderr,
      });
    };
    child.once("exit", (code, signal) => {
      exited = { code, signal, at: performance.now() };
      // Its output is read to the end, unless a process it left behind holds the pipe.
      setTimeout(finish, 1_000).unref();
    });
    child.once("close", finish);
  });
}

/** Runs tasks with at most `width` at once, across every caller that shares it. */
export type Limiter = <Result>(task: () => Promise<Result>) => Promise<Result>;

export function limiter(width: number): Limiter {
  let running = 0;
  const queue: Array<() => void> = [];
  return async (task) => {
    if (running >= width) await new Promise<void>((resolve) => queue.push(resolve));
    running++;
    try {
      return await task();
    } finally {
      running--;
      queue.shift()?.();
    }
  };
}

/**
 * Children at once: the cases mostly wait on their deadline, so more children than cores
 * keep the machine busy without making a deadline late. `CONTAINMENT_WIDTH` sets it.
 */
export const WIDTH = Number(process.env.CONTAINMENT_WIDTH ?? 6);

/** How one program of the corpus ended in a case: its run, or how the runtime's process ended during it. */
export interface CaseResult {
  name: string;
  /** What the child reported of the run; absent when the child died or hung during it. */
  run?: RunEvent;
  /** Set when the runtime's process did not outlive the run: it died (code, signal) or hung past the cap. */
  processEnded?: ChildReport["exit"];
  /** The end of the child's standard error, when it did not outlive the run. */
  stderr?: string;
  /**
   * How the child that ran it ended, when not with `process.exit(0)` once it had closed its
   * runtime: it hung there (`process.exit()` did not return) or died after its last run.
   */
  exitAfterClose?: ChildReport["exit"];
}

export interface CorpusCase {
  engine: HostileRunConfig["engine"];
  host: HostileRunConfig["host"];
  timeoutMs: number;
  memoryMb: number;
  programs: ReadonlyArray<{ name: string; code: string }>;
  /** Cancel each run through `runtime.cancel` this long after it started. */
  cancelAfterMs?: number;
  /** Programs one child runs one after another (a fresh child takes over after one that died). */
  batch: number;
  /** Programs that get a child of their own (one that may leave a thread or an isolate running). */
  alone?: (name: string) => boolean;
  /** How long a child may report nothing before it is killed as hung (ms). */
  capMs: number;
}

/**
 * Runs the programs of a case in children, `batch` to a child, as many at once as `limit` lets.
 * When a child dies or hangs, the program it was running is charged with it and a fresh child
 * runs the rest of its batch. A child that never got ready (its first benign pass failed, as it
 * may on a machine busy with other tests, or `npm run build` was rewriting the packages) is
 * started again a few seconds later, twice at most.
 */
export async function runCorpus(corpusCase: CorpusCase, limit: Limiter): Promise<Map<string, CaseResult>> {
  const { engine, host, timeoutMs, memoryMb, cancelAfterMs, batch, capMs } = corpusCase;
  const results = new Map<string, CaseResult>();
  const runBatch = async (programs: CorpusCase["programs"]) => {
    let remaining = programs;
    let startsLeft = 3;
    while (remaining.length > 0) {
      const runs = remaining.map(({ name, code }) => ({ name, code, ...(cancelAfterMs ? { cancelAfterMs } : {}) }));
      const child = await runHostileChild({ engine, host, timeoutMs, memoryMb, runs }, capMs);
      const closed = child.events.some((event) => event.event === "closed");
      const exitedAfterClose = child.exit !== "hung" && child.exit.code === 0 && child.exit.signal === null;
      for (const run of child.runs)
        results.set(run.name, {
          name: run.name,
          run,
          ...(closed && !exitedAfterClose ? { exitAfterClose: child.exit } : {}),
        });
      const ready = child.events.some((event) => event.event === "ready");
      if (!ready && --startsLeft > 0) {
        await sleep(5_000);
        continue;
      }
      const exitedCleanly = child.exit !== "hung" && child.exit.code === 0;
      const charged = child.lastStarted ?? remaining[0]!.name;
      if (!exitedCleanly && !results.has(charged))
        results.set(charged, { name: charged, processEnded: child.exit, stderr: child.stderr.slice(-600) });
      const next = remaining.findIndex((program) => !results.has(program.name));
      if (next < 0) return;
      if (exitedCleanly) throw new Error(`the child exited 0 without running ${remaining[next]!.name}`);
      remaining = remaining.slice(next);
    }
  };
  const alone = corpusCase.alone ?? (() => false);
  const together = corpusCase.programs.filter((program) => !alone(program.name));
  const batches: Array<CorpusCase["programs"]> = corpusCase.programs
    .filter((program) => alone(program.name))
    .map((program) => [program]);
  for (let start = 0; start < together.length; start += batch) batches.push(together.slice(start, start + batch));
  await Promise.all(batches.map((programs) => limit(() => runBatch(programs))));
  return results;
}

/**
 * With CONTAINMENT_REPORT_DIR set, writes what a file measured there as `<name>.json`, to read
 * the figures behind a table (SECURITY-TABLE.md) or a failure.
 */
export function saveReport(name: string, value: unknown): void {
  const directory = process.env.CONTAINMENT_REPORT_DIR;
  if (!directory) return;
  mkdirSync(directory, { recursive: true });
  writeFileSync(join(directory, `${name}.json`), JSON.stringify(value, null, 1));
}
