/**
 * Where passes run (R-SB-8, the `sandboxHost` option): sandbox processes (the default), sandbox
 * threads and the runtime's own thread, with isolated-vm, and sandbox processes with QuickJS, on
 * the programs of runtime.bench.ts, with A (bare isolated-vm) measured in the same run:
 *
 * 1. cold pass: the first pass of a fresh runtime, from creating it, host started for it (for
 *    sandbox processes: a fresh `createProcessExecutor`, since the runtime's own processes are
 *    shared by a process's runtimes and outlive a closed one for a few seconds);
 * 2. warm pass: 5 reads + 1 write on a runtime that has run passes before;
 * 3. per connector call: passes of 1,000 sequential awaits minus passes of none;
 * 4. replays per second on resume: approve after 1,000 recorded calls minus approve after 0,
 *    against A's calls per second (1 / A's per-call cost of row 3);
 * 5. per call with a result of 900 KB: passes of LARGE_CALLS such calls minus passes of none
 *    (the result encoded, recorded, sent to the sandbox and decoded there, then handed back in
 *    the outcome's log), against the inline host;
 * 6. 1, 16 and 100 executions in flight, each host in a process of its own (hosts-in-flight.ts):
 *    warm passes per second, their latency, the per-call cost under that load and the RSS at the
 *    end of each level, counting the sandbox processes.
 *
 * The targets are for the default host (sandbox processes, isolated-vm), against the
 * inline host of the same run: per call at most 1.5×, a warm pass at most 1.3×; each such row
 * says whether it is met. Run once, not repeated (as quickjs.bench.ts): merged runs would keep the
 * first run's verdict beside the median of all.
 */
import { performance } from "node:perf_hooks";
import { type CodemodeRuntime, createCodemodeRuntime } from "@codemode/core";
import { createProcessExecutor } from "@codemode/core/sandbox";
import { type Benchmark, type BenchRow, check, perCallCost, type Stats, sampleInterleaved, stats } from "./harness.ts";
import {
  CALLS_IN_FLIGHT,
  type InFlightFigures,
  LEVELS,
  type Level,
  measureInFlight,
  SUBJECTS,
  type Subject,
} from "./hosts-in-flight.ts";
import {
  checkHost,
  DEFAULT_HOST,
  HOST_MODES,
  type HostMode,
  hostRuntime,
  IN_PROCESS_HOST,
  inSandboxProcesses,
  MODES,
} from "./hosts-modes.ts";
import { type BenchProgram, fiveReadsOneWrite, LARGE_RESULT_CHARS, largeResults, sequentialCalls } from "./programs.ts";
import { type ApproveSamples, bench as replayConnector, sampleApprovesAfter } from "./replay.bench.ts";
import { bare, connectorsFor, throughRuntime } from "./runtime.bench.ts";

const CALLS = 1_000;
const REPLAYED = 1_000;
const MB = 1_000_000;

const COLD = "host modes: cold pass, 5 reads + 1 write (fresh runtime, its host started for it)";
const WARM = "host modes: warm pass, 5 reads + 1 write (in-memory store, runtime warmed)";
const PER_CALL = `host modes: per connector call (${CALLS} sequential awaits, in-memory store)`;
const LARGE_CALLS = 20;
const LARGE = `host modes: per call with a ${LARGE_RESULT_CHARS / 1_000} KB string result (${LARGE_CALLS} sequential awaits, in-memory store)`;
const REPLAY = `host modes: replayed calls per second on resume (approve after ${REPLAYED} recorded calls, minus after 0)`;
const RATE = "host modes in flight: warm passes per second (5 reads + 1 write)";
const LATENCY = "host modes in flight: latency of a warm pass (5 reads + 1 write)";
const LOADED_CALL = `host modes in flight: per connector call under load (${CALLS_IN_FLIGHT}-call passes alternated with 0-call ones)`;
const RSS = "host modes in flight: RSS at the end of the level (runtime process + its sandbox processes)";
const FAILED = "host modes in flight: passes that failed (a fault of the host under load)";

const A_LABEL = "A: bare isolated-vm";
const label = (subject: Subject) => (subject === "bare" ? A_LABEL : HOST_MODES[subject].label);

/** The targets for the default host, as multiples of the inline host's figure of the same run. */
const TARGETS = {
  pass: { most: 1.3, what: "warm pass" },
  call: { most: 1.5, what: "per call" },
} as const;

/** The target text of a default-host row: its ratio to the inline host's figure, and whether it is met. */
function againstInline(kind: keyof typeof TARGETS, measured: number, inline: number): string {
  const { most, what } = TARGETS[kind];
  const ratio = measured / inline;
  return `≤ ${most}× the inline host's ${what} (${ratio.toFixed(2)}× in this run): ${ratio <= most ? "met" : "not met"}`;
}

/** The default host's target on a row of `mode`, or nothing for the other modes. */
function target(mode: HostMode, kind: keyof typeof TARGETS, measured: number, inline: number): Partial<BenchRow> {
  return mode === DEFAULT_HOST ? { target: againstInline(kind, measured, inline) } : {};
}

function figures(measured: Pick<Stats, "median" | "p90" | "n">): Pick<BenchRow, "median" | "p90" | "samples"> {
  return { median: measured.median, p90: measured.p90, samples: measured.n };
}

/**
 * A's row, then each host's against A, the default host's with the target (`kind`); and
 * every subject's median, for the comparison against the inline host.
 */
function rowsAgainstA(
  benchmark: string,
  unit: BenchRow["unit"],
  measured: Record<Subject, Pick<Stats, "median" | "p90" | "n">>,
  kind: keyof typeof TARGETS,
  subjectOf: (subject: Subject) => string,
): { rows: BenchRow[]; medians: Record<Subject, number> } {
  const a = measured.bare;
  const rows: BenchRow[] = [{ benchmark, subject: subjectOf("bare"), unit, ...figures(a) }];
  for (const mode of MODES)
    rows.push({
      benchmark,
      subject: subjectOf(mode),
      unit,
      ...figures(measured[mode]),
      ratio: measured[mode].median / a.median,
      versus: "A",
      ...target(mode, kind, measured[mode].median, measured[IN_PROCESS_HOST].median),
    });
  const medians = Object.fromEntries(SUBJECTS.map((subject) => [subject, measured[subject].median]));
  return { rows, medians: medians as Record<Subject, number> };
}

/** One runtime per host mode; closed by `closeAll`. */
function runtimesFor(connectors: Parameters<typeof hostRuntime>[1], extra: Parameters<typeof hostRuntime>[2] = {}) {
  return Object.fromEntries(MODES.map((mode) => [mode, hostRuntime(mode, connectors, extra)])) as Record<
    HostMode,
    CodemodeRuntime
  >;
}

async function closeAll(runtimes: Record<HostMode, CodemodeRuntime>): Promise<void> {
  await Promise.all(MODES.map((mode) => runtimes[mode].close()));
}

function checkHosts(runtimes: Record<HostMode, CodemodeRuntime>): void {
  for (const mode of MODES) checkHost(runtimes[mode], mode);
}

/** The first pass of a fresh runtime of `mode`, timed from creating it; the runtime is closed after (not timed). */
function coldPassOf(mode: HostMode, samples: number[]): () => Promise<void> {
  const program = fiveReadsOneWrite;
  const connectors = connectorsFor(program);
  return async () => {
    const started = performance.now();
    // A fresh executor, so that the pass starts its sandbox processes (the runtime's own are shared).
    const executor = inSandboxProcesses(mode)
      ? createProcessExecutor({ engine: HOST_MODES[mode].options.executor })
      : undefined;
    const runtime = executor
      ? createCodemodeRuntime({ connectors, maxExecutions: 20, executor })
      : hostRuntime(mode, connectors);
    try {
      await throughRuntime(runtime, program)();
      samples.push(performance.now() - started);
      if (!executor) checkHost(runtime, mode);
      else check((await executor.stats()).processes > 0, `${HOST_MODES[mode].label}: no sandbox process ran the pass`);
    } finally {
      await runtime.close();
      await executor?.close();
    }
  };
}

async function coldPass(): Promise<BenchRow[]> {
  const samples = Object.fromEntries(MODES.map((mode) => [mode, [] as number[]])) as Record<HostMode, number[]>;
  const tasks: Record<string, () => Promise<void>> = {};
  for (const mode of MODES) tasks[mode] = coldPassOf(mode, samples[mode]);
  const aSamples = await sampleInterleaved({ ...tasks, bare: bare(fiveReadsOneWrite) }, { warmup: 1, iterations: 8 });
  const a = stats(aSamples.bare!);
  return [
    { benchmark: COLD, subject: A_LABEL, unit: "ms", ...figures(a) },
    ...MODES.map((mode): BenchRow => {
      // The warm-up round's sample is dropped here (sampleInterleaved drops only its own timings).
      const measured = stats(samples[mode].slice(1));
      return {
        benchmark: COLD,
        subject: label(mode),
        unit: "ms",
        ...figures(measured),
        ratio: measured.median / a.median,
        versus: "A",
      };
    }),
  ];
}

async function warmPass(): Promise<{ rows: BenchRow[]; medians: Record<Subject, number> }> {
  const program = fiveReadsOneWrite;
  const runtimes = runtimesFor(connectorsFor(program));
  try {
    const tasks: Record<string, () => Promise<void>> = { bare: bare(program) };
    for (const mode of MODES) tasks[mode] = throughRuntime(runtimes[mode], program);
    const samples = await sampleInterleaved(tasks, { warmup: 10, iterations: 100 });
    checkHosts(runtimes);
    const measured = Object.fromEntries(SUBJECTS.map((subject) => [subject, stats(samples[subject]!)])) as Record<
      Subject,
      Stats
    >;
    return rowsAgainstA(WARM, "ms", measured, "pass", label);
  } finally {
    await closeAll(runtimes);
  }
}

type CallCost = ReturnType<typeof perCallCost>;

/**
 * Per call of `many` (`calls` calls) on each host, from passes of it minus passes of `none`, all
 * interleaved, on runtimes made for it; with `withA`, bare isolated-vm's too (as `bare`).
 */
async function callCosts(
  many: BenchProgram,
  none: BenchProgram,
  calls: number,
  rounds: { warmup: number; iterations: number },
  withA: boolean,
): Promise<Record<Subject, CallCost>> {
  const runtimes = runtimesFor(connectorsFor(many));
  try {
    const tasks: Record<string, () => Promise<void>> = withA ? { bareMany: bare(many), bareNone: bare(none) } : {};
    for (const mode of MODES) {
      tasks[`${mode}Many`] = throughRuntime(runtimes[mode], many);
      tasks[`${mode}None`] = throughRuntime(runtimes[mode], none);
    }
    const samples = await sampleInterleaved(tasks, rounds);
    checkHosts(runtimes);
    const subjects: Subject[] = withA ? SUBJECTS : MODES;
    return Object.fromEntries(
      subjects.map((subject) => [subject, perCallCost(samples[`${subject}Many`]!, samples[`${subject}None`]!, calls)]),
    ) as Record<Subject, CallCost>;
  } finally {
    await closeAll(runtimes);
  }
}

async function perCall(): Promise<{ rows: BenchRow[]; medians: Record<Subject, number> }> {
  const cost = await callCosts(sequentialCalls(CALLS), sequentialCalls(0), CALLS, { warmup: 3, iterations: 20 }, true);
  return rowsAgainstA(PER_CALL, "µs", cost, "call", (subject) =>
    subject === "bare" ? `${A_LABEL}: applySyncPromise round trip` : `${label(subject)}, readOnly tool`,
  );
}

/** Per call of a 900 KB result, each host against the inline host (A's bridge is not what is measured here). */
async function largeResultCalls(): Promise<{ rows: BenchRow[]; medians: Record<HostMode, number> }> {
  const rounds = { warmup: 2, iterations: 12 };
  const cost = await callCosts(largeResults(LARGE_CALLS), largeResults(0), LARGE_CALLS, rounds, false);
  const inline = cost[IN_PROCESS_HOST];
  const rows = MODES.map(
    (mode): BenchRow => ({
      benchmark: LARGE,
      subject: label(mode),
      unit: "ms",
      median: cost[mode].median / 1_000,
      p90: cost[mode].p90 / 1_000,
      samples: cost[mode].n,
      ...(mode === IN_PROCESS_HOST ? {} : { ratio: cost[mode].median / inline.median, versus: "inline host" }),
    }),
  );
  const medians = Object.fromEntries(MODES.map((mode) => [mode, cost[mode].median]));
  return { rows, medians: medians as Record<HostMode, number> };
}

const REPLAY_WARMUP = 3;
const REPLAY_MEASURED = 15;

/** Approve after 0 and after REPLAYED recorded calls, every host and length in a shuffled order. */
async function replays(aCallsPerSecond: number): Promise<{ rows: BenchRow[]; rates: Record<HostMode, number> }> {
  const runtimes = runtimesFor([replayConnector], { maxExecutions: 10 });
  let samples: Record<HostMode, ApproveSamples>;
  try {
    samples = await sampleApprovesAfter(runtimes, REPLAYED, { warmup: REPLAY_WARMUP, measured: REPLAY_MEASURED });
    checkHosts(runtimes);
  } finally {
    await closeAll(runtimes);
  }
  const rates = {} as Record<HostMode, number>;
  const rows = MODES.map((mode): BenchRow => {
    const empty = stats(samples[mode].empty);
    const full = stats(samples[mode].full);
    // As replay.bench.ts: floored at 1 µs, so that a difference lost in the noise gives a huge rate.
    const perSecond = (milliseconds: number) => (REPLAYED / Math.max(0.001, milliseconds - empty.median)) * 1_000;
    rates[mode] = perSecond(full.median);
    return {
      benchmark: REPLAY,
      subject: label(mode),
      unit: "/s",
      median: rates[mode],
      p90: perSecond(full.p90),
      ratio: rates[mode] / aCallsPerSecond,
      versus: "A's calls/s",
      samples: full.n,
    };
  });
  return { rows, rates };
}

/** Rows of the in-flight levels, level by level within each figure. */
function inFlightRows(load: InFlightFigures): BenchRow[] {
  const rows: BenchRow[] = [];
  const each = (row: (subject: Subject, level: Level) => BenchRow) => {
    for (const level of LEVELS) for (const subject of SUBJECTS) rows.push(row(subject, level));
  };
  const a = (level: Level) => load.bare[level];
  const inline = (level: Level) => load[IN_PROCESS_HOST][level];
  const ratioToA = (subject: Subject, measured: number, baseline: number) =>
    subject === "bare" ? {} : { ratio: measured / baseline, versus: "A" };
  const subjectAt = (subject: Subject, level: Level) => `${level} in flight, ${label(subject)}`;
  each((subject, level) => {
    const { perSecond } = load[subject][level];
    return {
      benchmark: RATE,
      subject: subjectAt(subject, level),
      unit: "/s",
      median: perSecond.median,
      p90: perSecond.slowest,
      ...ratioToA(subject, perSecond.median, a(level).perSecond.median),
      samples: perSecond.n,
      series: {
        name: "host modes",
        x: level,
        xLabel: "executions in flight",
        yLabel: "warm passes/s",
        line: subject === "bare" ? A_LABEL : HOST_MODES[subject].line,
      },
    };
  });
  each((subject, level) => {
    const { latency } = load[subject][level];
    return {
      benchmark: LATENCY,
      subject: subjectAt(subject, level),
      unit: "ms",
      ...figures(latency),
      ...ratioToA(subject, latency.median, a(level).latency.median),
      ...(subject === "bare" ? {} : target(subject, "pass", latency.median, inline(level).latency.median)),
    };
  });
  each((subject, level) => {
    const { perCall: cost } = load[subject][level];
    return {
      benchmark: LOADED_CALL,
      subject: subjectAt(subject, level),
      unit: "µs",
      ...figures(cost),
      ...ratioToA(subject, cost.median, a(level).perCall.median),
      ...(subject === "bare" ? {} : target(subject, "call", cost.median, inline(level).perCall.median)),
    };
  });
  each((subject, level) => {
    const { resident } = load[subject][level];
    const total = resident.selfBytes + resident.childBytes;
    const aTotal = a(level).resident.selfBytes + a(level).resident.childBytes;
    return {
      benchmark: RSS,
      subject: subjectAt(subject, level),
      unit: "MB",
      median: total / MB,
      ...ratioToA(subject, total, aTotal),
    };
  });
  // Only where passes failed: a row that says how many, and why the first did (not measured otherwise).
  for (const level of LEVELS)
    for (const subject of SUBJECTS) {
      const { failed, failure } = load[subject][level];
      if (failed === 0) continue;
      rows.push({
        benchmark: FAILED,
        subject: `${subjectAt(subject, level)}: ${failed} passes failed; the first: ${failure ?? ""}`,
        unit: "ms",
        median: Number.NaN,
        target: "none",
      });
    }
  return rows;
}

let report = "";

/** A section of RESULTS.md: each host against the inline host of the same run, and where RSS sits. */
function compare(
  warm: Record<Subject, number>,
  call: Record<Subject, number>,
  replay: Record<HostMode, number>,
  large: Record<HostMode, number>,
  load: InFlightFigures,
): string {
  const others = MODES.filter((mode) => mode !== IN_PROCESS_HOST);
  const ratio = (measured: number, inline: number) => `${(measured / inline).toFixed(2)}×`;
  const line = (what: string, of: (mode: HostMode) => string) => `| ${what} | ${others.map(of).join(" | ")} |`;
  const lines = [
    `| figure, as a multiple of the inline host's | ${others.map((mode) => HOST_MODES[mode].label).join(" | ")} |`,
    `|---|${others.map(() => "---").join("|")}|`,
    line("warm pass (one at a time)", (mode) => ratio(warm[mode], warm[IN_PROCESS_HOST])),
    line(`per call (${CALLS} sequential awaits)`, (mode) => ratio(call[mode], call[IN_PROCESS_HOST])),
    line("replays per second", (mode) => ratio(replay[mode], replay[IN_PROCESS_HOST])),
    line(`per call with a ${LARGE_RESULT_CHARS / 1_000} KB result`, (mode) =>
      ratio(large[mode], large[IN_PROCESS_HOST]),
    ),
  ];
  for (const level of LEVELS) {
    const at = (mode: HostMode) => load[mode][level];
    const inline = at(IN_PROCESS_HOST);
    lines.push(
      line(`${level} in flight: passes per second`, (mode) =>
        ratio(at(mode).perSecond.median, inline.perSecond.median),
      ),
      line(`${level} in flight: latency of a pass`, (mode) => ratio(at(mode).latency.median, inline.latency.median)),
      line(`${level} in flight: per call`, (mode) => ratio(at(mode).perCall.median, inline.perCall.median)),
      line(`${level} in flight: RSS, runtime + sandbox processes (MB)`, (mode) => {
        const { selfBytes, childBytes } = at(mode).resident;
        return `${((selfBytes + childBytes) / MB).toFixed(0)} = ${(selfBytes / MB).toFixed(0)} + ${(childBytes / MB).toFixed(0)} (inline ${(inline.resident.selfBytes / MB).toFixed(0)})`;
      }),
    );
  }
  return lines.join("\n");
}

export const hostsBenchmark: Benchmark = {
  name: "hosts",
  description:
    "sandbox processes, threads and the runtime's thread: cold and warm pass, per call, replays, megabyte results, 1/16/100 in flight and RSS, against A",
  section: "Host modes against the inline host (bench/hosts.bench.ts)",
  report: () => report,
  async run() {
    const cold = await coldPass();
    const warm = await warmPass();
    const call = await perCall();
    const replay = await replays(1_000_000 / call.medians.bare);
    const large = await largeResultCalls();
    const load = await measureInFlight();
    report = compare(warm.medians, call.medians, replay.rates, large.medians, load);
    return [...cold, ...warm.rows, ...call.rows, ...replay.rows, ...large.rows, ...inFlightRows(load)];
  },
};
