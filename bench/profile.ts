/**
 * Where the time of a pass goes: CPU profiles of the main thread (V8's sampling profiler, through
 * `node:inspector`) while the runtime runs the benchmarks' programs, with self time grouped by
 * what the code does. `npm run bench` runs it in a child process on a full run and appends its
 * Markdown to bench/RESULTS.md; `node bench/profile.ts` prints it alone (after `npm run build`).
 *
 * The isolate runs on isolated-vm's own threads: the main thread's "idle" share is time it waits
 * for the isolate (or the store): the isolate's own work is not in these profiles.
 */
import { Session } from "node:inspector/promises";
import { performance } from "node:perf_hooks";
import { type CodemodeRuntime, type Connector, createCodemodeRuntime, defineConnector } from "@codemode/core";
import { createIsolatedVmExecutor } from "@codemode/core/sandbox";
import { type BenchProgram, fiveReadsOneWrite, sequentialCalls } from "./programs.ts";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const IDLE = "waiting (isolate thread, store, timers)";

/** What a sample's function does, from its name and file; the first match wins. */
const CATEGORIES: Array<[string, (name: string, url: string) => boolean]> = [
  [IDLE, (name) => name === "(idle)"],
  ["garbage collection", (name) => name === "(garbage collector)"],
  [
    "new isolate + context (isolated-vm, synchronous)",
    (name, url) => name === "prepareIsolate" || (url === "" && (name === "Isolate" || name === "createContext")),
  ],
  ["dispose isolate", (name, url) => name === "disposeIsolate" || (url === "" && name === "dispose")],
  [
    "prelude compile (code cache)",
    (name, url) => name === "compilePrelude" || (url === "" && name === "compileScript"),
  ],
  ["executor and bridge (host side)", (_name, url) => url.includes("/sandbox/")],
  ["parsing the program (acorn)", (_name, url) => url.includes("acorn")],
  [
    "log store, index and leases",
    (_name, url) => url.includes("/log/") || url.includes("keyv") || url.includes("/storage/"),
  ],
  ["runtime: passes, calls, transitions", (_name, url) => url.includes("/runtime/") || url.includes("/connectors/")],
];

function categorize(profile: Profile): Map<string, number> {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const totals = new Map<string, number>();
  for (let index = 0; index < profile.samples.length; index++) {
    const node = byId.get(profile.samples[index]!);
    if (!node) continue;
    const { functionName, url } = node.callFrame;
    const name = functionName || "(anonymous)";
    const category = CATEGORIES.find(([, matches]) => matches(name, url))?.[0] ?? "other (Node, promises, program)";
    totals.set(category, (totals.get(category) ?? 0) + (profile.timeDeltas[index] ?? 0));
  }
  return totals;
}

function connectorsFor(program: BenchProgram): Connector[] {
  return Object.entries(program.connectors).map(([name, methods]) =>
    defineConnector({
      name,
      tools: Object.fromEntries(
        methods.map((method) => [
          method,
          {
            readOnly: method !== "updateCustomer" && method !== "write",
            requiresApproval: method === "write",
            execute: async (args: unknown) => program.answer(name, method, args),
          },
        ]),
      ),
    }),
  );
}

interface Scenario {
  title: string;
  /** Operations per profile. */
  count: number;
  /** Prepares `count` operations before the profiler starts (executions to approve). */
  prepare?(count: number): Promise<void>;
  /** Runs one operation. */
  run(): Promise<void>;
  close(): Promise<void>;
}

async function completed(runtime: CodemodeRuntime, code: string): Promise<void> {
  const outcome = await runtime.execute({ code });
  if (outcome.status !== "completed") throw new Error(`profile: the program did not complete (${outcome.status})`);
}

function scenarios(): Scenario[] {
  // The runtime's own thread (`sandboxHost: "inline"`): the profile is of the thread that runs the pass.
  const cold = createCodemodeRuntime({
    connectors: connectorsFor(fiveReadsOneWrite),
    maxExecutions: 20,
    sandboxHost: "inline",
  });
  const warmExecutor = createIsolatedVmExecutor({ prewarm: 1 });
  const warm = createCodemodeRuntime({
    connectors: connectorsFor(fiveReadsOneWrite),
    maxExecutions: 20,
    executor: warmExecutor,
  });
  const many = sequentialCalls(1_000);
  const perCall = createCodemodeRuntime({ connectors: connectorsFor(many), maxExecutions: 10, sandboxHost: "inline" });
  const gated: BenchProgram = {
    ...many,
    connectors: { bench: ["echo", "write"] },
    answer: (_connector, method, args) => (method === "write" ? { ok: true } : many.answer("bench", "echo", args)),
  };
  const replay = createCodemodeRuntime({ connectors: connectorsFor(gated), maxExecutions: 10, sandboxHost: "inline" });
  const toApprove: string[] = [];
  const fiveReads = `async () => {${fiveReadsOneWrite.body}\n}`;
  return [
    {
      title: "durable cold pass, 5 reads + 1 write (in-memory store)",
      count: 300,
      run: () => completed(cold, fiveReads),
      close: () => cold.close(),
    },
    {
      title: "the same, isolate prepared ahead (preparing the next one is on this thread too)",
      count: 300,
      run: async () => {
        await warmExecutor.warm();
        await completed(warm, fiveReads);
      },
      close: async () => {
        await warm.close();
        await warmExecutor.close();
      },
    },
    {
      title: "a pass of 1,000 sequential read-only calls (in-memory store)",
      count: 15,
      run: () => completed(perCall, `async () => {${many.body}\n}`),
      close: () => perCall.close(),
    },
    {
      title: "approve after 1,000 recorded calls (replayed inside the sandbox)",
      count: 15,
      async prepare(count) {
        for (let index = 0; index < count; index++) {
          const paused = await replay.execute({
            code: "async () => { let sum = 0; for (let i = 0; i < 1000; i++) sum += (await bench.echo({ i })).i; await bench.write({ sum }); return sum; }",
          });
          if (paused.status !== "paused") throw new Error("profile: expected a pause");
          toApprove.push(paused.executionId);
        }
      },
      run: async () => {
        const executionId = toApprove.shift();
        if (executionId === undefined) return noneLeft();
        const done = await replay.approve({ executionId });
        if (done.status !== "completed") throw new Error("profile: approve did not complete");
      },
      close: () => replay.close(),
    },
  ];
}

function noneLeft(): never {
  throw new Error("profile: no paused execution left to approve");
}

async function main(): Promise<void> {
  const session = new Session();
  session.connect();
  await session.post("Profiler.enable");
  await session.post("Profiler.setSamplingInterval", { interval: 100 });
  const sections: string[] = [];
  for (const scenario of scenarios()) {
    await scenario.prepare?.(5 + 2 * scenario.count);
    for (let index = 0; index < 5; index++) await scenario.run();
    // Unprofiled first: the wall clock and the CPU of every thread of the process per operation.
    const cpu = process.cpuUsage();
    const started = performance.now();
    for (let index = 0; index < scenario.count; index++) await scenario.run();
    const wall = performance.now() - started;
    const cpuUsed = process.cpuUsage(cpu);
    await session.post("Profiler.start");
    for (let index = 0; index < scenario.count; index++) await scenario.run();
    const { profile } = (await session.post("Profiler.stop")) as unknown as { profile: Profile };
    await scenario.close();
    const totals = categorize(profile);
    const all = [...totals.values()].reduce((sum, value) => sum + value, 0);
    const rows = [...totals].sort((a, b) => b[1] - a[1]);
    const perOperation = (micros: number) => `${(micros / 1_000 / scenario.count).toFixed(2)} ms`;
    sections.push(
      [
        `### ${scenario.title}`,
        "",
        `Without the profiler: ${(wall / scenario.count).toFixed(2)} ms per operation (wall clock), ${perOperation(cpuUsed.user + cpuUsed.system)} of CPU on all the process's threads (the main thread, the isolate's, V8's compilers and collectors). Profiled: ${scenario.count} more operations.`,
        "",
        "| main thread | share | per operation |",
        "| --- | --- | --- |",
        ...rows.map(
          ([category, micros]) => `| ${category} | ${((micros / all) * 100).toFixed(1)}% | ${perOperation(micros)} |`,
        ),
      ].join("\n"),
    );
  }
  console.log(sections.join("\n\n"));
}

await main();
