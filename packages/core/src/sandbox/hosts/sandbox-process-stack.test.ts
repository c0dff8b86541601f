/**
 * Where a pass runs does not decide how deep its program may recurse or whether it compiles
 * (R-SB-8). A pass alone in its sandbox process is set up, compiled and answered on the process's
 * main thread, whose stack V8 limits to about 1 MB unless told otherwise, while isolated-vm's own
 * threads (where the in-process host runs programs) have the whole stack limit, 8 MB on Linux.
 */
import ivm from "isolated-vm";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { PassRequest } from "../executor.js";
import { compileProgram } from "../isolated-vm/isolated-vm-engine.js";
import { createIsolatedVmExecutor } from "../isolated-vm/isolated-vm-executor.js";
import { mainThreadStackKb } from "./fork-sandbox-process.js";
import { createProcessExecutor, type ProcessExecutor } from "./process-host.js";

/** Recursion 40,000 frames deep: about three times what V8's default stack holds, a third of an 8 MB one. */
const DEPTH = 40_000;
const recursing = (before: string) =>
  `async () => { ${before} function f(n) { return n === 0 ? 0 : f(n - 1) + 1; } return f(${DEPTH}); }`;
const PROGRAMS = {
  "at its start": recursing(""),
  "after an await": recursing("await null;"),
  "after a tool call": recursing("await math.add({ a: 1, b: 2 });"),
};

const request = (code: string): PassRequest => ({
  code,
  connectors: { math: ["add"] },
  onRequest: async () => ({ kind: "value", value: JSON.stringify({ sum: 3 }) }),
  timeoutMs: 10_000,
});

let executor: ProcessExecutor | undefined;
afterEach(async () => {
  await executor?.close();
  executor = undefined;
});

describe("a sandbox process's stack (isolated-vm)", () => {
  it(`R-SB-8: a program recurses ${DEPTH} frames deep in a sandbox process, as in this one: at its start, after an await, after a call`, async () => {
    executor = createProcessExecutor({ engine: "isolated-vm", processes: 1 });
    const inProcess = createIsolatedVmExecutor();
    try {
      for (const [when, code] of Object.entries(PROGRAMS)) {
        const expected = { status: "returned", value: String(DEPTH) };
        expect(await inProcess.runPass(request(code)), `in this process, ${when}`).toMatchObject(expected);
        expect(await executor.runPass(request(code)), `in a sandbox process, ${when}`).toMatchObject(expected);
      }
    } finally {
      await inProcess.close();
    }
  });

  it("R-SB-8: V8 gets the stack limit less a megabyte, at most 32 MB; an unknown or small limit leaves V8's default", () => {
    const limits = (soft: string) =>
      `Limit                     Soft Limit           Hard Limit           Units     \nMax stack size            ${soft}              unlimited            bytes     \n`;
    expect(mainThreadStackKb(limits("8388608"))).toBe(7_168);
    expect(mainThreadStackKb(limits("unlimited"))).toBe(7_168);
    expect(mainThreadStackKb(limits(String(1024 ** 3)))).toBe(32_768);
    expect(mainThreadStackKb(limits(String(1024 * 1024)))).toBeUndefined();
    expect(mainThreadStackKb("Max open files 1024 1024 files\n")).toBeUndefined();
  });

  it("R-SB-8: a program too deep to compile on a thread with V8's default stack is compiled on isolated-vm's thread instead", async () => {
    // 5,000 nested array literals: V8's parser recurses for each. Test workers run with V8's default stack.
    const source = `let d = 0; for (let a = ${"[".repeat(5_000)}${"]".repeat(5_000)}; a.length > 0; a = a[0]) d++; d`;
    const isolate = new ivm.Isolate({ memoryLimit: 64 });
    try {
      expect(() => isolate.compileScriptSync(source)).toThrow(RangeError);
      const script = await compileProgram(isolate, source, { filename: "deep.js", lineOffset: 0, here: true });
      const context = await isolate.createContext();
      expect(await script.run(context)).toBe(4_999);
    } finally {
      isolate.dispose();
    }
  });
});

describe("where a pass alone in a sandbox process starts (isolated-vm)", () => {
  const LOOP_AT_START = "async () => { for (;;) {} }";
  const ADD = "async () => (await math.add({ a: 1, b: 2 })).sum";

  /**
   * A pass whose program loops from its start until `stop()` cancels it (its deadline is far off,
   * so that what is checked is an order of events, not how long a busy machine takes for them).
   */
  function loopUntilStopped(on: ProcessExecutor) {
    const controller = new AbortController();
    let ended = false;
    const looping = on.runPass({ ...request(LOOP_AT_START), timeoutMs: 60_000, signal: controller.signal });
    void looping.finally(() => {
      ended = true;
    });
    return { looping, stillLooping: () => !ended, stop: () => controller.abort("the test is done with it") };
  }

  it("R-SB-8: with no other process idle, a program that loops from its start leaves the process's thread to the next pass", async () => {
    executor = createProcessExecutor({ engine: "isolated-vm", processes: 1 });
    await executor.warm();
    const { looping, stillLooping, stop } = loopUntilStopped(executor);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await executor.runPass(request(ADD))).toMatchObject({ status: "returned", value: "3" });
    // Answered while the loop still runs: it runs on isolated-vm's thread, not the process's.
    expect(stillLooping()).toBe(true);
    stop();
    expect(await looping).toMatchObject({ status: "failed", code: "SANDBOX_ERROR" });
  });

  it("R-SB-8: with a slot free, it starts on the process's thread, and the next pass goes to a process started for it rather than wait behind the loop", async () => {
    executor = createProcessExecutor({ engine: "isolated-vm", processes: 2 });
    const { looping, stillLooping, stop } = loopUntilStopped(executor);
    // The loop's process is up (seconds on a machine busy with other tests), and the loop started.
    const up = executor;
    await vi.waitFor(async () => expect((await up.stats()).processes).toBeGreaterThan(0), {
      timeout: 30_000,
      interval: 20,
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await executor.stats()).processes).toBe(1);
    expect(await executor.runPass(request(ADD))).toMatchObject({ status: "returned", value: "3" });
    // Answered by a process started for it (a quarter of a second here) while the loop still
    // holds the first one: it did not wait behind the loop, which ends only when stopped.
    expect(stillLooping()).toBe(true);
    expect((await executor.stats()).processes).toBe(2);
    stop();
    expect(await looping).toMatchObject({ status: "failed", code: "SANDBOX_ERROR" });
  });

  it("R-SB-8: with another process idle, it starts on the process's thread: a cancel ends that process, the pass ends at once, the next runs", async () => {
    executor = createProcessExecutor({ engine: "isolated-vm", processes: 2 });
    await executor.warm();
    const controller = new AbortController();
    const looping = executor.runPass({ ...request(LOOP_AT_START), timeoutMs: 20_000, signal: controller.signal });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const aborted = performance.now();
    controller.abort("cancelled by ops");
    expect(await looping).toMatchObject({ status: "failed", code: "SANDBOX_ERROR" });
    expect(performance.now() - aborted).toBeLessThan(2_000);
    // The process whose thread the loop held could not read the abort: it was ended (and replaced).
    expect((await executor.stats()).processesLost).toBe(1);
    expect(await executor.runPass(request(ADD))).toMatchObject({ status: "returned", value: "3" });
  });
});
