/**
 * The QuickJS executor: what is its own. The shared suites (isolated-vm-executor-*.test.ts,
 * hostile-corpus-*.test.ts) run on it with CODEMODE_EXECUTOR=quickjs.
 */
import { afterAll, describe, expect, it } from "vitest";
import type { HostReply } from "../executor.js";
import { LARGE_PROGRAM_CHARS, readingGateBuffer } from "../pass/reading-gate.js";
import { echo, expectFailed, expectReturned, passRunner, type RunOptions, sleep } from "../pass-fixtures.js";
import { createQuickJsExecutor, type QuickJsExecutor, type QuickJsExecutorOptions } from "./index.js";
import { newQuickJsModule } from "./quickjs-module.js";

/** An executor closed after the file's tests, and a runner on it (deterministic, a `github` connector). */
function quickJs(options: QuickJsExecutorOptions = {}) {
  const executor = createQuickJsExecutor({ timeoutMs: 5_000, ...options });
  afterAll(() => executor.close());
  const runner = passRunner(executor, { seed: "quickjs", clockMs: Date.UTC(2024, 0, 2) });
  return { executor, run: (code: string, runOptions?: RunOptions) => runner(code, runOptions) };
}

describe("module instances", () => {
  const { executor, run } = quickJs({ modulePasses: 3 });
  /** A fresh executor for one test (closed when the file's tests are done): idle modules of other tests do not count. */
  const alone = (() => {
    const executors: QuickJsExecutor[] = [];
    afterAll(() => Promise.all(executors.map((each) => each.close())));
    return () => {
      const fresh = createQuickJsExecutor({ timeoutMs: 5_000 });
      executors.push(fresh);
      return { executor: fresh, run: passRunner(fresh, { seed: "quickjs", clockMs: 0 }) };
    };
  })();

  it("a module serves one pass at a time, for modulePasses passes, then a new one is made", async () => {
    const before = executor.stats();
    for (let index = 0; index < 7; index++) expect(expectReturned(await run(`${index} * 2`))).toBe(index * 2);
    const after = executor.stats();
    // 7 passes, 3 to a module: 3 modules, 4 passes in a module used before.
    expect(after.modulesCreated - before.modulesCreated).toBe(3);
    expect(after.passesReused - before.passesReused).toBe(4);
    expect(after.modulesLive).toBe(1);
    // Passes side by side each get a module of their own.
    const together = await Promise.all(
      [1, 2, 3].map((n) => run(`async () => { await new Promise((r) => setTimeout(r, 30)); return ${n}; }`)),
    );
    expect(together.map(expectReturned)).toEqual([1, 2, 3]);
    expect(executor.stats().modulesCreated - after.modulesCreated).toBeGreaterThanOrEqual(2);
  });

  it("a pass whose memory grew leaves its module dropped: the next pass starts in a new one", async () => {
    const { executor, run } = alone();
    expect(expectReturned(await run("'warm'"))).toBe("warm");
    const before = executor.stats();
    expect(expectReturned(await run("async () => 'x'.repeat(24 * 1024 * 1024).length"))).toBe(24 * 1024 * 1024);
    expect(expectReturned(await run("'next'"))).toBe("next");
    const after = executor.stats();
    expect(after.modulesDropped - before.modulesDropped).toBeGreaterThanOrEqual(1);
    expect(after.modulesCreated - before.modulesCreated).toBe(1);
  });

  it("a module serves one partition only, and one memory limit", async () => {
    const { executor, run } = alone();
    await run("1", { partition: "runtime-a" });
    const before = executor.stats();
    await run("1", { partition: "runtime-b" });
    await run("1", { partition: "runtime-b", memoryMb: 64 });
    expect(executor.stats().modulesCreated - before.modulesCreated).toBe(2);
  });
});

describe("handles", () => {
  const { executor, run } = quickJs();

  it("QuickJS refuses to free a runtime while a handle into it is left: the check the next test relies on", async () => {
    const module = await newQuickJsModule(32 * 1024 * 1024);
    const runtime = module.quickjs.newRuntime();
    const context = runtime.newContext();
    const leaked = context.evalCode("({ left: 'behind' })").unwrap();
    context.dispose();
    expect(() => runtime.dispose()).toThrow(/Assertion failed/);
    expect(leaked.alive).toBe(true);
  });

  it("every way a pass ends frees its runtime: no handle is left behind", async () => {
    const answers: Array<[string, (request: never) => HostReply | Promise<HostReply>]> = [
      ["halt", () => ({ kind: "halt" })],
      ["wait", () => ({ kind: "wait" })],
      ["denied", () => ({ kind: "denied", message: "no" })],
      ["error", () => ({ kind: "error", message: "failed" })],
      ["never", () => new Promise<HostReply>(() => {})],
    ];
    const outcomes = [
      await run("async () => (await github.get({ a: 1 })).seq"),
      await run("async () => { throw new Error('thrown'); }"),
      await run("async () => () => 'not data'"),
      await run("async () => /(?<a>x)|(?<a>y)/"),
      await run("async () => { setInterval(() => {}, 1); new Promise(() => {}); return 'left things running'; }"),
      await run("while (true) {}", { timeoutMs: 200 }),
      await run("async () => { const keep = []; for (;;) keep.push(new Array(100000).fill(1)); }", { memoryMb: 32 }),
      ...(await Promise.all(
        answers.map(([, answer]) =>
          // Room for a busy machine: only "never" is meant to reach the limit.
          run("async () => { await github.get({}); return 'answered'; }", {
            answer: answer as never,
            timeoutMs: 1_500,
          }),
        ),
      )),
    ];
    expect(outcomes.map(({ result }) => (result.status === "failed" ? result.code : result.status))).toEqual([
      "returned",
      "PROGRAM_ERROR",
      "NOT_SERIALIZABLE",
      "SYNTAX_ERROR",
      "returned",
      "TIMEOUT",
      "MEMORY_LIMIT",
      "halted",
      "halted",
      "denied",
      "PROGRAM_ERROR",
      "TIMEOUT",
    ]);
    expect(executor.stats()).toMatchObject({ passesRunning: 0, runtimesNotFreed: 0 });
  });

  it("a runtime quickjs-ng leaks (a heavy job cut off by the limit) takes only its module with it", async () => {
    // quickjs-ng keeps objects of a job interrupted while it held large arrays: freeing its
    // runtime then asserts. The module is dropped; the executor goes on.
    const outcome = await run(
      "async () => { await null; const keep = []; for (;;) keep.push(new Array(1000).fill(1)); }",
      { timeoutMs: 300 },
    );
    expect(outcome.result).toMatchObject({ status: "failed", code: expect.stringMatching(/^(TIMEOUT|MEMORY_LIMIT)$/) });
    expect(expectReturned(await run("'next'"))).toBe("next");
  });
});

describe("limits", () => {
  const { executor, run } = quickJs();

  it("a program that catches QuickJS's out of memory error still fails with MEMORY_LIMIT", async () => {
    const caught = await run(
      "async () => { let kept = 0; try { const keep = []; for (;;) { keep.push(new Array(100000).fill(1)); kept++; } } catch (error) { return 'survived ' + kept + ' ' + error; } }",
      { memoryMb: 32 },
    );
    expectFailed(caught, "MEMORY_LIMIT", "32 MB");
  });

  it("an allocation too large to make, not caught, is a MEMORY_LIMIT", async () => {
    // (An array filled to that size is refused by the Array guard before it allocates.)
    expectFailed(await run("async () => new Uint8Array(2 ** 28).length", { memoryMb: 32 }), "MEMORY_LIMIT");
    expectFailed(await run("async () => 'x'.repeat(2 ** 28).length", { memoryMb: 32 }), "MEMORY_LIMIT");
  });

  it("deep recursion fails with QuickJS's RangeError, and the executor goes on", async () => {
    const outcome = await run("async () => { const down = (n) => down(n + 1) + 1; return down(0); }");
    expectFailed(outcome, "PROGRAM_ERROR", "RangeError: Maximum call stack size exceeded");
    expect(expectReturned(await run("6 * 7"))).toBe(42);
  });

  it("a recursion that overflows the host's stack inside QuickJS fails the pass and drops its module", async () => {
    // The parser's frames take far more of the host's stack than of QuickJS's own: the host
    // overflows first, inside the module, which is never used again.
    const before = executor.stats();
    const outcome = await run("async () => JSON.parse('['.repeat(100000))");
    expectFailed(outcome, "SANDBOX_ERROR", "Maximum call stack size exceeded");
    expect(executor.stats().modulesDropped).toBeGreaterThan(before.modulesDropped);
    expect(expectReturned(await run("6 * 7"))).toBe(42);
  });

  it("while (true) {} is interrupted at the deadline, in the first run and in a delivery", async () => {
    for (const program of ["while (true) {}", "async () => { await github.get({}); while (true) {} }"]) {
      const started = Date.now();
      expectFailed(await run(program, { timeoutMs: 300 }), "TIMEOUT", "300 ms");
      expect(Date.now() - started).toBeLessThan(2_000);
    }
    expect(expectReturned(await run("'next'"))).toBe("next");
  });

  it("an aborted pass ends at once with the abort's reason", async () => {
    const controller = new AbortController();
    const pending = run("async () => { await github.get({}); await new Promise((r) => setTimeout(r, 10_000)); }", {
      signal: controller.signal,
    });
    await sleep(100);
    controller.abort("the run was cancelled");
    expectFailed(await pending, "SANDBOX_ERROR", "the run was cancelled");
  });
});

describe("large programs", () => {
  const { run } = quickJs();

  it("R-SB-3: a large program's reading turn ends before it runs: one that loops holds no turn while it loops", async () => {
    const counter = new Int32Array(readingGateBuffer());
    const readersWhileLooping: number[] = [];
    // Over LARGE_PROGRAM_CHARS, so it takes a turn; the interrupt handler polls `aborted` while it loops.
    const code = `async () => { const pad = ${JSON.stringify("x".repeat(LARGE_PROGRAM_CHARS))}; for (;;) {} }`;
    const outcome = await run(code, {
      timeoutMs: 500,
      aborted: () => {
        readersWhileLooping.push(Atomics.load(counter, 0));
        return false;
      },
    });
    expectFailed(outcome, "TIMEOUT");
    // Polled while it compiled too (holding its turn then); while the program loops, no turn is held.
    expect(readersWhileLooping.length).toBeGreaterThan(0);
    expect(readersWhileLooping.at(-1)).toBe(0);
  });
});

describe("close()", () => {
  it("ends a pass waiting on the host at once, and keeps no module", async () => {
    const executor = createQuickJsExecutor({ timeoutMs: 10_000 });
    const run = passRunner(executor, false);
    await run("1");
    expect(executor.stats().modulesLive).toBe(1);
    const started = Date.now();
    const pending = run("async () => { await github.get({}); await new Promise((r) => setTimeout(r, 10_000)); }", {
      answer: echo,
    });
    await sleep(100);
    await executor.close();
    expectFailed(await pending, "SANDBOX_ERROR", "the executor was closed");
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(executor.stats()).toMatchObject({ passesRunning: 0, modulesLive: 0, runtimesNotFreed: 0 });
  });
});

describe("globals", () => {
  const { run } = quickJs();

  it("quickjs-ng's own globals are gone, and call sites hand out no function or receiver", async () => {
    const outcome = await run(`async () => {
      Error.prepareStackTrace = (error, frames) => frames.map((frame) => [typeof frame.getFunction(), typeof frame.getThis()]);
      const frames = new Error('probe').stack;
      Error.prepareStackTrace = undefined;
      return { frames, names: ['performance', 'InternalError', 'DOMException'].filter((name) => name in globalThis), tag: Object.getOwnPropertySymbols(globalThis).length };
    }`);
    const value = expectReturned(outcome) as { frames: string[][]; names: string[]; tag: number };
    expect(value.frames.length).toBeGreaterThan(0);
    for (const frame of value.frames) expect(frame).toEqual(["undefined", "undefined"]);
    expect(value.names).toEqual([]);
    expect(value.tag).toBe(0);
  });

  it("an error logged shows its name and message before its frames, as with isolated-vm", async () => {
    const outcome = await run("async () => { console.log(new TypeError('bad')); }");
    expect(outcome.result.logs[0]).toMatch(/^TypeError: bad\n {4}at /);
  });
});
