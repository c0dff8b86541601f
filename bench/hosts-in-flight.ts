/**
 * The host modes at 1, 16 and 100 executions in flight, for bench/hosts.bench.ts. Each host mode,
 * and A (bare isolated-vm), runs in a child process of its own (this file, `--child <subject>`),
 * so that the RSS read at the end of each level (that process's plus its sandbox processes')
 * belongs to that mode alone; the children wait for their turn, and every round runs them one
 * after another in an order that rotates, so drift on a shared machine hits them all alike (each in a
 * process of its own, they leave nothing behind for the next, as subjects of one process do).
 *
 * A round keeps `level` executions in flight for a window (a closed loop: each finished pass
 * starts the next until the window ends, and at least `level` and 8 passes start), then waits for
 * the last to finish. Per level and subject: warm passes (5 reads + 1 write) per second over the
 * measured rounds (their slowest round as the slow end) and the latency of one (median and p90);
 * and the cost of one connector call under that load, from rounds where every execution in
 * flight alternates passes of 100 sequential calls and passes of none, so that both kinds run
 * under the same load: (median latency with calls − median latency without) / 100, as the
 * per-call rows of runtime.bench.ts. Under load that is what a call adds to a pass's latency
 * while `level` passes share the machine, so it grows with the level. A level starts with a
 * warm-up round of half a window, so that the sandboxes for that many passes exist before
 * anything is timed.
 */
import { type ChildProcess, fork } from "node:child_process";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import type { CodemodeRuntime } from "@codemode/core";
import { check, perCallCost, percentile } from "./harness.ts";
import {
  checkHost,
  type HostMode,
  hostRuntime,
  inSandboxProcesses,
  MODES,
  type Resident,
  residentMemory,
} from "./hosts-modes.ts";
import { type BenchProgram, fiveReadsOneWrite, sequentialCalls } from "./programs.ts";
import { bare, connectorsFor } from "./runtime.bench.ts";

export const LEVELS = [1, 16, 100] as const;
export type Level = (typeof LEVELS)[number];
/** How long a measured round keeps starting passes, by executions in flight (a warm-up round: half). */
const WINDOW_MS: Record<Level, number> = { 1: 200, 16: 400, 100: 600 };
/** Before a level's first workload only: the others find the sandboxes it made for that many passes. */
const WARMUP_ROUNDS = 1;
/**
 * Measured rounds per workload, by level. One at a time, a round is short and a subject's figure
 * is its passes' median over all its rounds: six short rounds spread over the level, rather than
 * two long ones, keep the machine's drift from one window to the next out of the ratios.
 */
const ROUNDS: Record<Level, number> = { 1: 6, 16: 2, 100: 2 };
/** Passes a round starts at the least, window or not (and one per execution in flight). */
const MIN_PASSES = 8;
/** Calls of the passes the per-call cost under load is measured with. */
export const CALLS_IN_FLIGHT = 100;

/** What a round runs: the warm pass (5 reads + 1 write), or passes of 100 and of 0 sequential calls, alternated. */
const WORKLOADS = ["pass", "calls"] as const;
type Workload = (typeof WORKLOADS)[number];
/** A host mode, or "bare": A, bare isolated-vm. */
export type Subject = HostMode | "bare";
export const SUBJECTS: Subject[] = ["bare", ...MODES];

type ToChild =
  | { type: "run"; workload: Workload; level: Level; windowMs: number }
  | { type: "rss" }
  | { type: "close" };
interface Round {
  completed: number;
  elapsedMs: number;
  /** Milliseconds of each completed pass, by the program it ran (its index in the round's alternation). */
  latencies: number[][];
  /** Passes that did not complete as they should (not counted in `completed`), and why the first did not. */
  failed: number;
  failure?: string;
}
type FromChild =
  | { type: "ready" }
  | { type: "round"; round: Round }
  | { type: "rss"; resident: Resident }
  | { type: "error"; message: string }
  /** Said by the parent for a child that ended while asked. */
  | { type: "ended"; how: string };
/** How long past its window a round may take before its child counts as stuck. */
const STUCK_MS = 120_000;
/** How long a child may take to close its runtime and end before it is ended. */
const CLOSE_MS = 10_000;

/** What one subject measured at one level. */
export interface LevelFigures {
  perSecond: { median: number; slowest: number; n: number };
  latency: { median: number; p90: number; n: number };
  /** µs per call under this load (see `perCallCost`). */
  perCall: { median: number; p90: number; n: number };
  resident: Resident;
  /** Passes of the level that failed (any workload), and why the first did: a fault of the host under load. */
  failed: number;
  failure?: string;
}

export type InFlightFigures = Record<Subject, Record<Level, LevelFigures>>;

/** Runs every subject at every level, interleaved, each in a child process of its own. */
export async function measureInFlight(): Promise<InFlightFigures> {
  const children = Object.fromEntries(SUBJECTS.map((subject) => [subject, new Child(subject)])) as Record<
    Subject,
    Child
  >;
  const rounds = new Map<string, Round[]>();
  const residents = new Map<string, Resident>();
  try {
    await Promise.all(SUBJECTS.map((subject) => children[subject].ready));
    for (const level of LEVELS) {
      for (const workload of WORKLOADS) {
        const warmup = workload === WORKLOADS[0] ? WARMUP_ROUNDS : 0;
        for (let round = 0; round < warmup + ROUNDS[level]; round++) {
          const windowMs = round < warmup ? WINDOW_MS[level] / 2 : WINDOW_MS[level];
          for (let offset = 0; offset < SUBJECTS.length; offset++) {
            const subject = SUBJECTS[(round + offset) % SUBJECTS.length]!;
            const reply = await children[subject].ask({ type: "run", workload, level, windowMs }, windowMs + STUCK_MS);
            check(reply.type === "round", `${subject}: expected a round, got ${reply.type}`);
            if (round < warmup) continue;
            const key = `${subject}:${level}:${workload}`;
            rounds.set(key, [...(rounds.get(key) ?? []), reply.round]);
          }
        }
      }
      for (const subject of SUBJECTS) {
        const reply = await children[subject].ask({ type: "rss" }, STUCK_MS);
        check(reply.type === "rss", `${subject}: expected its RSS, got ${reply.type}`);
        const sandboxProcesses = subject !== "bare" && inSandboxProcesses(subject);
        check(
          sandboxProcesses ? reply.resident.processes > 0 : reply.resident.processes === 0,
          `${subject}: ${reply.resident.processes} processes below its runtime's`,
        );
        residents.set(`${subject}:${level}`, reply.resident);
      }
    }
  } finally {
    await Promise.all(SUBJECTS.map((subject) => children[subject].close()));
  }
  const figures = (subject: Subject, level: Level): LevelFigures => {
    const of = (workload: Workload) => rounds.get(`${subject}:${level}:${workload}`)!;
    const latencies = (workload: Workload, program: number) =>
      of(workload).flatMap((round) => round.latencies[program] ?? []);
    const warm = latencies("pass", 0);
    const all = WORKLOADS.flatMap(of);
    const failure = all.find((round) => round.failure !== undefined)?.failure;
    const { median, p90, n } = perCallCost(latencies("calls", 0), latencies("calls", 1), CALLS_IN_FLIGHT);
    return {
      perSecond: throughput(of("pass")),
      latency: { median: percentile(warm, 50), p90: percentile(warm, 90), n: warm.length },
      perCall: { median, p90, n },
      resident: residents.get(`${subject}:${level}`)!,
      failed: all.reduce((sum, round) => sum + round.failed, 0),
      ...(failure === undefined ? {} : { failure }),
    };
  };
  return Object.fromEntries(
    SUBJECTS.map((subject) => [subject, Object.fromEntries(LEVELS.map((level) => [level, figures(subject, level)]))]),
  ) as InFlightFigures;
}

/** Passes per second over all the rounds, and in the slowest of them. */
function throughput(rounds: readonly Round[]): LevelFigures["perSecond"] {
  const completed = rounds.reduce((sum, round) => sum + round.completed, 0);
  const elapsed = rounds.reduce((sum, round) => sum + round.elapsedMs, 0);
  return {
    median: (completed / elapsed) * 1_000,
    slowest: Math.min(...rounds.map((round) => (round.completed / round.elapsedMs) * 1_000)),
    n: completed,
  };
}

/** A child process running one subject, asked one thing at a time. */
class Child {
  private readonly process: ChildProcess;
  private readonly replies: Array<(message: FromChild) => void> = [];
  private exited = false;
  readonly ready: Promise<void>;

  readonly subject: Subject;

  constructor(subject: Subject) {
    this.subject = subject;
    this.process = fork(fileURLToPath(import.meta.url), ["--child", subject], {
      execArgv: ["--no-node-snapshot"],
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    this.ready = new Promise<FromChild>((resolve) => this.replies.push(resolve)).then((message) => {
      check(message.type === "ready", `the ${subject} child did not start: ${JSON.stringify(message)}`);
    });
    this.process.once("exit", (code, signal) => {
      this.exited = true;
      for (const waiting of this.replies.splice(0)) waiting({ type: "ended", how: String(signal ?? code) });
    });
    this.process.on("message", (message: FromChild) => this.replies.shift()?.(message));
  }

  /** Sends `message` and waits for the answer; a child that gives none within `withinMs` is ended. */
  async ask(message: ToChild, withinMs: number): Promise<FromChild> {
    check(!this.exited, `the ${this.subject} child has ended`);
    const reply = new Promise<FromChild>((resolve) => this.replies.push(resolve));
    this.process.send(message);
    const stuck = setTimeout(() => this.process.kill("SIGKILL"), withinMs);
    const answer = await reply;
    clearTimeout(stuck);
    const what = JSON.stringify(message);
    check(
      answer.type !== "ended",
      `the ${this.subject} child ended (${answer.type === "ended" ? answer.how : ""}) on ${what}`,
    );
    check(
      answer.type !== "error",
      `the ${this.subject} child failed on ${what}: ${answer.type === "error" ? answer.message : ""}`,
    );
    check(
      answer.type !== "round" || answer.round.completed > 0,
      `${this.subject}: a round completed no pass (${what})`,
    );
    return answer;
  }

  /** Asks the child to close its runtime and end; ends it if it has not within CLOSE_MS. */
  async close(): Promise<void> {
    if (this.exited) return;
    const exited = new Promise<void>((resolve) => this.process.once("exit", () => resolve()));
    const stuck = setTimeout(() => this.process.kill("SIGKILL"), CLOSE_MS);
    try {
      this.process.send({ type: "close" } satisfies ToChild);
    } catch {
      this.process.kill("SIGKILL");
    }
    await exited;
    clearTimeout(stuck);
  }
}

/**
 * Keeps `level` passes in flight until the window ends, then waits for the last. Each execution
 * in flight runs the `programs` in turn, starting with a different one from its neighbour. A pass
 * that fails is counted apart (the rows say so), not timed, and the round goes on.
 */
async function runRound(programs: Array<() => Promise<void>>, level: number, windowMs: number): Promise<Round> {
  const started = performance.now();
  const deadline = started + windowMs;
  const latencies = programs.map((): number[] => []);
  let failed = 0;
  let failure: string | undefined;
  let lastEnd = started;
  let passes = 0;
  const least = Math.max(MIN_PASSES, level);
  await Promise.all(
    Array.from({ length: level }, async (_, slot) => {
      for (let turn = slot; performance.now() < deadline || passes < least; turn++) {
        passes++;
        const program = turn % programs.length;
        const passStarted = performance.now();
        try {
          await programs[program]!();
          latencies[program]!.push(performance.now() - passStarted);
        } catch (error) {
          failed++;
          failure ??= error instanceof Error ? error.message : String(error);
        }
        lastEnd = Math.max(lastEnd, performance.now());
      }
    }),
  );
  return {
    completed: latencies.reduce((sum, program) => sum + program.length, 0),
    elapsedMs: lastEnd - started,
    latencies,
    failed,
    ...(failure ? { failure } : {}),
  };
}

/** A pass of `program` that throws, saying how it ended in one line, unless it completed with the expected result. */
function completes(runtime: CodemodeRuntime, program: BenchProgram): () => Promise<void> {
  const code = `async () => {${program.body}\n}`;
  return async () => {
    const outcome = await runtime.execute({ code });
    if (outcome.status !== "completed") {
      const { status, code: failure, error } = outcome as { status: string; code?: string; error?: string };
      throw new Error(`${status} ${failure ?? ""}: ${error ?? ""}`.slice(0, 200));
    }
    const value = JSON.stringify(outcome.result);
    check(value === program.expected, `the runtime returned ${value}, expected ${program.expected}`);
  };
}

/** The child: runs rounds of one subject when asked, and says its RSS. */
async function serve(subject: Subject): Promise<void> {
  const many = sequentialCalls(CALLS_IN_FLIGHT);
  const none = sequentialCalls(0);
  const runtime =
    subject === "bare"
      ? undefined
      : hostRuntime(subject, [...connectorsFor(fiveReadsOneWrite), ...connectorsFor(many)], { maxExecutions: 200 });
  const run = (program: BenchProgram) => (runtime ? completes(runtime, program) : bare(program));
  const runs: Record<Workload, Array<() => Promise<void>>> = {
    pass: [run(fiveReadsOneWrite)],
    calls: [run(many), run(none)],
  };
  const send = (message: FromChild) => process.send?.(message);
  process.on("message", (message: ToChild) => {
    if (message.type === "close") {
      void (runtime?.close() ?? Promise.resolve()).then(() => process.exit(0));
      return;
    }
    if (message.type === "rss") {
      send({ type: "rss", resident: residentMemory() });
      return;
    }
    void runRound(runs[message.workload], message.level, message.windowMs)
      .then((round) => {
        if (runtime && subject !== "bare") checkHost(runtime, subject);
        send({ type: "round", round });
      })
      .catch((error: unknown) =>
        send({ type: "error", message: error instanceof Error ? error.message : String(error) }),
      );
  });
  send({ type: "ready" });
}

if (process.argv[2] === "--child" && process.argv[1] === fileURLToPath(import.meta.url)) {
  const subject = process.argv[3] as Subject;
  check(SUBJECTS.includes(subject), `unknown subject ${subject}`);
  await serve(subject);
}
