/**
 * Containment through the runtime (R-SB-8): passes run in sandbox processes by default; when one
 * crashes or stops answering, the run that caused it ends as data with its code, the runs that
 * only shared the process complete, this process lives, and nothing runs the crashed run again
 * by itself. The tests do to the sandbox processes what a hostile program would (a crash by a
 * signal, a freeze), so that each story is certain; hostile programs themselves are in
 * test/containment/ (npm run test:containment).
 */
import { type CodemodeRuntime, createCodemodeRuntime, defineConnector } from "@codemode/core";
import { afterEach, describe, expect, it } from "vitest";
import { gate, sandboxProcessIds, signalSandboxProcesses, until } from "./containment-fixtures.ts";

const opened: CodemodeRuntime[] = [];
afterEach(async () => {
  for (const runtime of opened.splice(0)) await runtime.close();
});

function gatedRuntime(options: Parameters<typeof createCodemodeRuntime>[0] = {}) {
  const door = gate();
  const warnings: string[] = [];
  const connector = defineConnector({
    name: "door",
    tools: { wait: { description: "Waits until the test opens the door.", execute: door.wait } },
  });
  const runtime = createCodemodeRuntime({
    connectors: [connector],
    sandboxProcesses: 1,
    limits: { timeoutMs: 20_000 },
    logger: { warn: (message) => warnings.push(message) },
    ...options,
  });
  opened.push(runtime);
  return { runtime, door, warnings };
}

const THROUGH = (name: string) => `async () => { await door.wait({}); return "${name}"; }`;

describe("containment through the runtime (R-SB-8)", () => {
  it("R-SB-8: passes run in sandbox processes by default; sandboxHost and CODEMODE_SANDBOX_HOST choose", async () => {
    const { runtime } = gatedRuntime();
    expect(runtime.load().sandboxHost).toBe("process");
    const outcome = await runtime.execute({ code: "async () => 6 * 7" });
    expect(outcome).toMatchObject({ status: "completed", result: 42 });
    expect(sandboxProcessIds().length).toBeGreaterThan(0);
    for (const sandboxHost of ["thread", "inline"] as const) {
      const other = createCodemodeRuntime({ sandboxHost });
      opened.push(other);
      expect(other.load().sandboxHost).toBe(sandboxHost);
      expect(await other.execute({ code: "async () => 1" })).toMatchObject({ status: "completed", result: 1 });
    }
    // Before sandbox processes, sandboxThreads chose threads (or this thread with 0): it still does.
    for (const [sandboxThreads, host] of [
      [2, "thread"],
      [0, "inline"],
    ] as const) {
      const older = createCodemodeRuntime({ sandboxThreads });
      opened.push(older);
      expect(older.load().sandboxHost).toBe(host);
    }
    process.env.CODEMODE_SANDBOX_HOST = "inline";
    try {
      const fromEnvironment = createCodemodeRuntime({});
      opened.push(fromEnvironment);
      expect(fromEnvironment.load().sandboxHost).toBe("inline");
    } finally {
      delete process.env.CODEMODE_SANDBOX_HOST;
    }
    expect(() => createCodemodeRuntime({ sandboxHost: "elsewhere" as "process" })).toThrow(/sandboxHost must be/);
    expect(() => createCodemodeRuntime({ sandboxProcesses: 0 })).toThrow(/sandboxProcesses must be/);
  });

  it("R-SB-8: runs that shared a sandbox process that crashed run again and complete; this process lives", async () => {
    const { runtime, door, warnings } = gatedRuntime();
    const first = runtime.execute({ code: THROUGH("first") });
    const second = runtime.execute({ code: THROUGH("second") });
    await until(() => door.waiting() === 2);
    // As an abort of V8 caused by one of them would: the process both passes run in dies.
    expect(signalSandboxProcesses("SIGSEGV")).toBeGreaterThan(0);
    door.open();
    expect(await first).toMatchObject({ status: "completed", result: "first" });
    expect(await second).toMatchObject({ status: "completed", result: "second" });
    // Each ran again alone: its call was recorded first, so it replayed and did not run twice.
    expect(door.waiting()).toBe(2);
    expect(warnings.filter((line) => line.includes("runs again in a sandbox process of its own"))).toHaveLength(2);
  });

  it("R-SB-8 R-SB-3: a pass that runs again after a shared crash runs within its first deadline, never a second full limit", async () => {
    const timeoutMs = 4_000;
    const { runtime, door, warnings } = gatedRuntime({ limits: { timeoutMs } });
    const spin = "async () => { await door.wait({}); for (;;) {} }";
    const first = runtime.execute({ code: spin });
    const second = runtime.execute({ code: spin });
    await until(() => door.waiting() === 2);
    // Both passes' time began before this instant (a busy machine may take seconds to get here).
    const calling = Date.now();
    // The crash comes well into the passes' time: run again with a fresh limit, each would end
    // a full limit after it.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(signalSandboxProcesses("SIGSEGV")).toBeGreaterThan(0);
    door.open();
    for (const outcome of await Promise.all([first, second]))
      expect(outcome).toMatchObject({ status: "error", code: "TIMEOUT" });
    expect(warnings.filter((line) => line.includes("runs again in a sandbox process of its own"))).toHaveLength(2);
    // At most the deadline, the host's grace (500 ms) and a second of slack after the calls came;
    // a second limit would end 6 s or more after them (the crash at 2 s, then 4 s).
    expect(Date.now() - calling).toBeLessThan(timeoutMs + 1_500);
  });

  it("R-SB-8: a run whose pass crashed its sandbox process alone ends SANDBOX_CRASHED; recover and rerun leave it, unless asked by code", async () => {
    const { runtime, door } = gatedRuntime();
    const running = runtime.execute({ code: THROUGH("crashed") });
    await until(() => door.waiting() === 1);
    signalSandboxProcesses("SIGSEGV");
    door.open();
    const outcome = await running;
    expect(outcome).toMatchObject({ status: "error", code: "SANDBOX_CRASHED" });
    if (outcome.status !== "error") throw new Error("unreachable");
    expect(outcome.error).toContain("signal SIGSEGV");
    expect(outcome.error).toContain("seq 0");
    const state = await runtime.execution(outcome.executionId);
    expect(state).toMatchObject({ status: "error", errorCode: "SANDBOX_CRASHED" });
    // No poison run: nothing runs it again by itself.
    expect(await runtime.recover()).toEqual([]);
    expect(await runtime.recover({ executionId: outcome.executionId })).toEqual([]);
    const left = await runtime.rerun({ executionId: outcome.executionId });
    expect(left.results[0]).toMatchObject({ action: "skipped", reason: { code: "NOT_PAUSED" } });
    expect(left.results[0]!.reason!.message).toContain('codes: ["SANDBOX_CRASHED"]');
    const asked = await runtime.rerun({ executionId: outcome.executionId, codes: ["SANDBOX_CRASHED"] });
    expect(asked.results[0]).toMatchObject({ action: "rerun", outcome: { status: "completed", result: "crashed" } });
  });

  // Within a second, on a machine running nothing else: test/containment (npm run test:containment).
  it("R-SB-8: a pass whose sandbox process stops answering is cancelled long before its deadline, and the next run completes", async () => {
    const { runtime, door } = gatedRuntime();
    door.open();
    const running = runtime.execute({ code: "async () => { await door.wait({}); for (;;) {} }" });
    await until(() => door.waiting() === 1);
    await new Promise((resolve) => setTimeout(resolve, 200));
    // As a loop inside a built-in that no engine interrupts would: the process reads nothing more.
    signalSandboxProcesses("SIGSTOP");
    const executionId = (await runtime.executions({ status: "running" })).items[0]!.id;
    const asked = performance.now();
    const report = await runtime.cancel({ executionId, by: "ops", reason: "stuck" });
    expect(report.result).toBe("cancelled");
    expect(performance.now() - asked).toBeLessThan(5_000);
    expect(await running).toMatchObject({ status: "error", code: "CANCELLED" });
    expect(await runtime.execute({ code: "async () => 'next'" })).toMatchObject({
      status: "completed",
      result: "next",
    });
  });
});
