/**
 * The process host (R-SB-8): passes run in sandbox processes, and whatever a program does to its
 * process — an abort of V8, a loop inside a built-in, memory without end — ends that process at
 * worst, never the test's, and every pass answers as data. Each test runs real child processes.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import type { PassRequest, PassResult } from "../executor.js";
import { EXECUTOR_FOR_TESTS } from "../pass-fixtures.js";
import { createProcessExecutor, type ProcessExecutor, type ProcessExecutorOptions } from "./process-host.js";

const engine = EXECUTOR_FOR_TESTS;
/** Grows a Map until the engine gives up: on isolated-vm, V8 aborts its whole process. */
const GROW_MAP = "async () => { const m = new Map(); let i = 0; for (;;) m.set(i++, { i, s: 'v' + i }); }";
/** An array-like whose length answers 0, then 2^53 − 1: a native loop no engine interrupts, unless guarded. */
const LYING_LENGTH =
  "async () => { let n = 0; const o = { get length() { return n++ === 0 ? 0 : 2 ** 53 - 1; } }; return Array.prototype.indexOf.call(o, 1); }";
const ADD = "async () => (await math.add({ a: 1, b: 2 })).sum";

let executor: ProcessExecutor | undefined;
/** Calls the programs of a test have asked (math.add), answered or not. */
let callsAsked = 0;
afterEach(async () => {
  await executor?.close();
  executor = undefined;
  callsAsked = 0;
});

/** Waits until the programs have asked `count` calls: a process may take seconds to start on a busy machine. */
function untilCallsAsked(count: number): Promise<void> {
  return vi.waitFor(() => expect(callsAsked).toBeGreaterThanOrEqual(count), { timeout: 30_000, interval: 20 });
}

function start(options: ProcessExecutorOptions = {}): ProcessExecutor {
  executor = createProcessExecutor({ engine, timeoutMs: 3_000, memoryMb: 64, ...options });
  return executor;
}

/** Runs `code`; math.add answers after `delayMs`. Resolves with the result and how long it took. */
async function run(
  code: string,
  overrides: Partial<PassRequest> & { delayMs?: number } = {},
): Promise<{ result: PassResult; ms: number }> {
  const { delayMs = 0, ...request } = overrides;
  const started = performance.now();
  const result = await (executor ?? start()).runPass({
    code,
    connectors: { math: ["add"] },
    onRequest: async () => {
      callsAsked++;
      if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
      return { kind: "value", value: JSON.stringify({ sum: 3 }) };
    },
    ...request,
  });
  return { result, ms: performance.now() - started };
}

function expectEnded(result: PassResult, codes: string[]): Extract<PassResult, { status: "failed" }> {
  expect(result.status).toBe("failed");
  const failed = result as Extract<PassResult, { status: "failed" }>;
  expect(codes).toContain(failed.code);
  return failed;
}

describe(`sandbox processes (${engine})`, () => {
  it("R-SB-8: a program runs in a sandbox process and its call is answered here", async () => {
    start();
    const { result } = await run(ADD);
    expect(result).toMatchObject({ status: "returned", value: "3" });
    const stats = await executor!.stats();
    // One pass at a time needs one process; passes that come together start the others.
    expect(stats.processes).toBe(1);
    expect(stats.pids.every((pid) => pid !== process.pid)).toBe(true);
    const together = await Promise.all([run(ADD), run(ADD), run(ADD)]);
    for (const { result: each } of together) expect(each).toMatchObject({ status: "returned", value: "3" });
    expect((await executor!.stats()).processes).toBe(2);
  });

  it("R-SB-8: warm() starts every process ahead of the first pass", async () => {
    await start().warm();
    expect((await executor!.stats()).processes).toBe(2);
  });

  it("R-SB-8: a Map grown without end ends its pass as data; this process lives and the next pass runs", async () => {
    start({ processes: 1 });
    const { result } = await run(GROW_MAP, { timeoutMs: 10_000 });
    // isolated-vm: V8 aborts the sandbox process (SIGABRT, said as out of memory); QuickJS: its own limit.
    expectEnded(result, ["MEMORY_LIMIT", "SANDBOX_CRASHED"]);
    expect((await run(ADD)).result).toMatchObject({ status: "returned", value: "3" });
  });

  it("R-SB-8: a lying length ends within the deadline and a second: over the length checked, or at the deadline", async () => {
    await start().warm();
    const { result, ms } = await run(LYING_LENGTH, { timeoutMs: 1_000 });
    // The Array guard (the second line) hands the built-in the length it checked: 0, so -1. Were
    // a built-in to loop past it, the process would be ended at the deadline and its grace.
    if (result.status === "returned") expect(result.value).toBe("-1");
    else expectEnded(result, ["TIMEOUT"]);
    expect(ms).toBeLessThan(1_000 + 5_000);
    expect((await run(ADD)).result.status).toBe("returned");
  });

  it("R-SB-8: passes that shared a process that crashed by itself run again alone; alone, the cause shows", async () => {
    await start({ processes: 1 }).warm();
    const first = run(ADD, { delayMs: 2_000, timeoutMs: 20_000 });
    const second = run(ADD, { delayMs: 2_000, timeoutMs: 20_000 });
    await untilCallsAsked(2);
    // As an abort of V8 inside one of them would: the process dies by a signal of its own.
    const [pid] = (await executor!.stats()).pids;
    process.kill(pid!, "SIGSEGV");
    for (const { result } of [await first, await second]) {
      const crashed = expectEnded(result, ["SANDBOX_CRASHED"]);
      expect(crashed.crash).toMatchObject({ signal: "SIGSEGV", lastSeq: 0, retry: "alone" });
    }
    // Run alone, a pass that crashes its process is the cause: no retry is asked for.
    const alone = run(ADD, { alone: true, delayMs: 2_000, timeoutMs: 20_000 });
    // Its process started and its call asked: killed while starting, it would be no crash of the pass's.
    await untilCallsAsked(3);
    const pids = (await executor!.stats()).pids.filter((other) => other !== pid);
    for (const other of pids) process.kill(other, "SIGSEGV");
    const crashed = expectEnded((await alone).result, ["SANDBOX_CRASHED"]);
    expect(crashed.crash?.retry).toBeUndefined();
    expect(crashed.error).toContain("crashed its sandbox process");
    expect((await run(ADD, { alone: true })).result.status).toBe("returned");
  });

  it("R-SB-8: a process that stops answering is ended at the deadline and grace: the overdue pass is the TIMEOUT, the other runs again", async () => {
    await start({ processes: 1, graceMs: 200 }).warm();
    // Asked before the loop: a QuickJS process whose program loops answers nothing, stats included.
    const [pid] = (await executor!.stats()).pids;
    const innocent = run(ADD, { delayMs: 1_000, timeoutMs: 20_000 });
    const overdue = run("async () => { await math.add({}); for (;;) {} }", { timeoutMs: 700 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    // As a loop inside a built-in that no engine interrupts would: the process answers nothing more.
    process.kill(pid!, "SIGSTOP");
    const ended = await overdue;
    expect(expectEnded(ended.result, ["TIMEOUT"]).crash?.signal).toBe("SIGKILL");
    expect(ended.ms).toBeLessThan(700 + 5_000);
    expect(expectEnded((await innocent).result, ["SANDBOX_CRASHED"]).crash?.retry).toBe("shared");
    expect((await run(ADD)).result.status).toBe("returned");
  });

  // The bound of the acceptance (within a second) is checked where nothing else runs beside it:
  // test/containment (npm run test:containment). Here: well before the pass's own deadline.
  it("R-SB-8: an abort ends a pass that does not stop, long before its deadline; this process lives", async () => {
    await start().warm();
    const controller = new AbortController();
    const pass = run("async () => { for (;;) {} }", { signal: controller.signal, timeoutMs: 30_000 });
    await new Promise((resolve) => setTimeout(resolve, 500));
    const aborted = performance.now();
    controller.abort("cancelled by ops");
    const { result } = await pass;
    expect(performance.now() - aborted).toBeLessThan(5_000);
    expect(expectEnded(result, ["SANDBOX_ERROR"]).error).toContain("cancelled by ops");
  });

  it("R-SB-8: a sandbox process over its memory cap is ended and the pass ends MEMORY_LIMIT", async () => {
    // Arrays kept: within the engine's 512 MB limit, over the process's 200 MB cap.
    start({ processes: 1, processMemoryMb: 200, memoryMb: 512 });
    const { result } = await run(
      "async () => { const keep = []; for (let i = 0; ; i++) { keep.push(new Array(1 << 17).fill(i)); if (i % 16 === 0) await math.add({}); } }",
      { timeoutMs: 20_000, memoryMb: 512 },
    );
    expect(expectEnded(result, ["MEMORY_LIMIT"]).error).toMatch(/sandbox|memory/);
  });

  it("R-SB-8: close() ends running passes and the processes at once", async () => {
    start();
    const pass = run("async () => { await new Promise(() => {}); }", { timeoutMs: 30_000 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const { pids } = await executor!.stats();
    const closing = performance.now();
    await executor!.close();
    expect(performance.now() - closing).toBeLessThan(5_000);
    expect(expectEnded((await pass).result, ["SANDBOX_ERROR"]).error).toContain("closed");
    for (const pid of pids) expect(alive(pid)).toBe(false);
    executor = undefined;
  });

  it("R-SB-8: a sandbox process is replaced after passesPerProcess passes", async () => {
    start({ processes: 1, passesPerProcess: 2 });
    const seen = new Set<number>();
    for (let index = 0; index < 5; index++) {
      expect((await run(ADD)).result.status).toBe("returned");
      for (const pid of (await executor!.stats()).pids) seen.add(pid);
    }
    expect(seen.size).toBeGreaterThanOrEqual(2);
    expect((await executor!.stats()).processesLost).toBe(0);
  });
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
