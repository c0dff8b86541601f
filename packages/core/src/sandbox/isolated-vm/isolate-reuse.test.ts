/**
 * `isolateReuse`: warm isolates, a fresh context per pass. Each story is one pass that tries to
 * leave something behind for the next, and the next pass, in the same isolate (the executor's
 * count of reused passes proves it), that looks for it and finds nothing.
 */
import { afterAll, describe, expect, it } from "vitest";
import type { PassRequest } from "../executor.js";
import { expectReturned, passRunner, type RunOptions, sleep } from "../pass-fixtures.js";
import { createIsolatedVmExecutor, type IsolatedVmExecutor } from "./isolated-vm-executor.js";

const CLOCK = Date.UTC(2024, 0, 2, 3, 4, 5);

function reusingExecutor(options: Parameters<typeof createIsolatedVmExecutor>[0] = {}): IsolatedVmExecutor {
  const executor = createIsolatedVmExecutor({ timeoutMs: 5_000, isolateReuse: { maxIdle: 1 }, ...options });
  afterAll(() => executor.close());
  return executor;
}

describe("isolateReuse: what one pass leaves, the next pass in the same isolate does not find", () => {
  // Kept whatever the passes allocate (maxHeapMb would retire an isolate a pass left large): the
  // point is that the next pass runs in the same isolate.
  const executor = reusingExecutor({ isolateReuse: { maxIdle: 1, maxHeapMb: 1_024 } });
  const run = passRunner(executor, { seed: "execution-1", clockMs: CLOCK });
  /** Runs `leave`, then `look` in the same isolate (asserted), and answers what `look` returned. */
  const leaveThenLook = async (leave: string, look: string, options: RunOptions = {}) => {
    const left = await run(leave, options);
    expect(left.result.status, JSON.stringify(left.result)).not.toBe("failed");
    const before = executor.stats().passesReused;
    const looked = await run(look, options);
    expect(executor.stats().passesReused, "the second pass ran in the first one's isolate").toBe(before + 1);
    return { left, looked, value: expectReturned(looked) };
  };

  it("R-SB-1: globals, var and function declarations, and eval'd state", async () => {
    const { value } = await leaveThenLook(
      "globalThis.leaked = 'secret'; eval('var evalLeak = 1'); (0, eval)('function globalFn() {}'); return typeof leaked",
      "return [typeof leaked, typeof evalLeak, typeof globalFn, Object.keys(globalThis).filter((key) => /leak|global/i.test(key))]",
    );
    expect(value).toEqual(["undefined", "undefined", "undefined", []]);
  });

  it("the code cache: the same source compiled again in the next pass runs afresh, with that pass's own state", async () => {
    const source = "function tick() { globalThis.ticks = (globalThis.ticks ?? 0) + 1; return globalThis.ticks; }";
    const { value } = await leaveThenLook(
      `(0, eval)(${JSON.stringify(source)}); tick(); tick(); globalThis.cachedTick = tick; return tick()`,
      `(0, eval)(${JSON.stringify(source)}); return [tick(), typeof cachedTick, typeof ticks]`,
    );
    expect(value).toEqual([1, "undefined", "number"]);
  });

  it("R-SB-1: built-ins' prototypes and functions: Object, Array, Promise, JSON, Function, Math", async () => {
    const { value } = await leaveThenLook(
      `Object.prototype.poisoned = true;
       Array.prototype.push = function () { return 'hijacked'; };
       Promise.prototype.then = function () { return 'hijacked'; };
       JSON.stringify = () => 'hijacked';
       Function.prototype.leak = 1;
       Math.max = () => -1;
       return 1`,
      `const list = []; list.push(1);
       return [typeof ({}).poisoned, list.length, JSON.stringify({ a: 1 }), typeof (() => 0).leak, Math.max(1, 2),
         await Promise.resolve(7).then((n) => n + 1)]`,
    );
    expect(value).toEqual(["undefined", 1, '{"a":1}', "undefined", 2, 8]);
  });

  it("Intl: a default time zone or locale cannot be changed for the next pass", async () => {
    const fresh = createIsolatedVmExecutor({ timeoutMs: 5_000 });
    try {
      const look =
        "return [Intl.DateTimeFormat().resolvedOptions().timeZone, Intl.DateTimeFormat().resolvedOptions().locale, new Date(0).getTimezoneOffset(), new Date(0).toString()]";
      const expected = expectReturned(await passRunner(fresh, { seed: "execution-1", clockMs: CLOCK })(look));
      const { value } = await leaveThenLook(
        `const format = Intl.DateTimeFormat;
         globalThis.Intl = { DateTimeFormat: () => ({ resolvedOptions: () => ({ timeZone: 'Mars/Base', locale: 'xx' }) }) };
         Date.prototype.getTimezoneOffset = () => 999;
         try { new format('en-US', { timeZone: 'Asia/Tokyo' }).format(0); } catch {}
         return 1`,
        look,
      );
      expect(value).toEqual(expected);
    } finally {
      await fresh.close();
    }
  });

  it("no callback of a pass can run after it: FinalizationRegistry and Atomics.waitAsync are absent; a WeakRef reaches nothing of it", async () => {
    // Their callbacks run when V8 schedules them, with no watchdog: in a warm isolate, after the
    // pass, a cleanup loop would hold the isolate (and the host asking it anything) for good.
    const { left, looked } = await leaveThenLook(
      `globalThis.ref = new WeakRef({ secret: 'pass-1' });
       return [typeof FinalizationRegistry, typeof Atomics.waitAsync, typeof WeakRef]`,
      `let junk = [];
       for (let round = 0; round < 50; round++) { junk = []; for (let i = 0; i < 2000; i++) junk.push({ i, pad: new Array(50).fill(round) }); }
       await new Promise((resolve) => setTimeout(resolve, 20));
       return [typeof ref, typeof FinalizationRegistry, typeof Atomics.waitAsync]`,
    );
    expect(expectReturned(left)).toEqual(["undefined", "undefined", "function"]);
    expect(expectReturned(looked)).toEqual(["undefined", "undefined", "undefined"]);
  });

  it("Atomics and shared buffers: nothing a pass allocates is reachable from the next", async () => {
    const { value } = await leaveThenLook(
      `globalThis.shared = typeof SharedArrayBuffer === 'function' ? new SharedArrayBuffer(16) : new ArrayBuffer(16);
       const view = new Int32Array(globalThis.shared); Atomics.store(view, 0, 42);
       return 1`,
      "return [typeof shared, typeof SharedArrayBuffer === 'function' ? new Int32Array(new SharedArrayBuffer(16))[0] : 0]",
    );
    expect(value).toEqual(["undefined", 0]);
  });

  it("R-SB-1: timers and microtasks still pending when a pass ends never run in the next pass", async () => {
    const { looked } = await leaveThenLook(
      `setTimeout(() => console.log('late timer'), 30);
       setInterval(() => console.log('late interval'), 10);
       new Promise((resolve) => setTimeout(resolve, 40)).then(() => console.log('late microtask'));
       return 1`,
      "await new Promise((resolve) => setTimeout(resolve, 120)); console.log('own line'); return 1",
    );
    expect(looked.result.logs).toEqual(["own line"]);
  });

  it("R-SB-6: the replay-stable clock and random seed are the next pass's own, as in a fresh isolate", async () => {
    const look = "return [Date.now(), Math.random(), crypto.getRandomValues(new Uint32Array(2)).join(',')]";
    const fresh = createIsolatedVmExecutor({ timeoutMs: 5_000 });
    try {
      const other = { deterministic: { seed: "execution-2", clockMs: CLOCK + 1_000 } } as const;
      const expected = expectReturned(await passRunner(fresh, other.deterministic)(look));
      const { value } = await leaveThenLook(
        "Math.random(); Math.random = () => 0.5; Date.now = () => 0; crypto.getRandomValues(new Uint32Array(8)); return 1",
        look,
        other,
      );
      expect(value).toEqual(expected);
    } finally {
      await fresh.close();
    }
  });
});

describe("isolateReuse: when an isolate is not reused", () => {
  const request = (code: string, partition = "app", extra: Partial<PassRequest> = {}): PassRequest => ({
    code: `async () => { ${code} }`,
    connectors: {},
    onRequest: async () => ({ kind: "value", value: "" }),
    deterministic: { seed: "s", clockMs: CLOCK },
    partition,
    ...extra,
  });

  it("R-SB-3: a pass that filled its heap leaves the isolate disposed: the next pass gets a fresh one and runs", async () => {
    const executor = reusingExecutor({ memoryMb: 64 });
    const filled = await executor.runPass(
      request(
        "globalThis.hoard = []; for (let i = 0; i < 40; i++) hoard.push(new Array(200_000).fill(i)); return hoard.length",
      ),
    );
    expect(filled).toMatchObject({ status: "returned", value: "40" });
    const reused = executor.stats().passesReused;
    const next = await executor.runPass(
      request(
        "const mine = []; for (let i = 0; i < 40; i++) mine.push(new Array(200_000).fill(i)); return mine.length",
      ),
    );
    expect(next).toMatchObject({ status: "returned", value: "40" });
    expect(executor.stats().passesReused).toBe(reused);
  });

  it("R-SB-3: a pass that timed out or ran out of memory: its isolate is never reused", async () => {
    const executor = reusingExecutor({ timeoutMs: 300 });
    expect(await executor.runPass(request("return 1"))).toMatchObject({ status: "returned" });
    expect(await executor.runPass(request("while (true) {}"))).toMatchObject({ status: "failed", code: "TIMEOUT" });
    const afterTimeout = executor.stats().passesReused;
    expect(await executor.runPass(request("return 2"))).toMatchObject({ status: "returned", value: "2" });
    expect(executor.stats().passesReused).toBe(afterTimeout);

    // A memory bomb can take longer than 300 ms on a loaded machine: its own executor.
    const small = reusingExecutor({ memoryMb: 24 });
    expect(await small.runPass(request("return 1"))).toMatchObject({ status: "returned" });
    expect(
      await small.runPass(request("const a = []; while (true) a.push(new Array(100_000).fill(1));")),
    ).toMatchObject({ status: "failed", code: "MEMORY_LIMIT" });
    const afterMemory = small.stats().passesReused;
    expect(await small.runPass(request("return 3"))).toMatchObject({ status: "returned", value: "3" });
    expect(small.stats().passesReused).toBe(afterMemory);
  });

  it("isolates serve one partition (runtime name) only, and a pass at a time", async () => {
    const executor = reusingExecutor({ isolateReuse: { maxIdle: 4 } });
    await executor.runPass(request("return 1", "tenant-a"));
    const reused = executor.stats().passesReused;
    await executor.runPass(request("return 1", "tenant-b"));
    expect(executor.stats().passesReused).toBe(reused);
    await executor.runPass(request("return 1", "tenant-a"));
    expect(executor.stats().passesReused).toBe(reused + 1);

    // Two passes at once: each has an isolate of its own, whatever is idle.
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const waiting = (marker: string): PassRequest => ({
      ...request(
        `globalThis.marker = ${JSON.stringify(marker)}; await tools.wait({}); return globalThis.marker`,
        "tenant-a",
      ),
      connectors: { tools: ["wait"] },
      onRequest: async () => {
        await gate;
        return { kind: "value", value: "" };
      },
    });
    const both = Promise.all([executor.runPass(waiting("one")), executor.runPass(waiting("two"))]);
    await sleep(50);
    expect(executor.stats().passesRunning).toBe(2);
    expect(executor.stats().isolatesLive).toBeGreaterThanOrEqual(2);
    release();
    expect((await both).map((result) => (result.status === "returned" ? result.value : result.status))).toEqual([
      '"one"',
      '"two"',
    ]);
  });

  it("as many isolates stay warm as passes ran at once; those idle past maxIdleMs are disposed but the last", async () => {
    const executor = reusingExecutor({ isolateReuse: { maxIdleMs: 100 } });
    await Promise.all(Array.from({ length: 5 }, () => executor.runPass(request("await null; return 1"))));
    expect(executor.stats()).toMatchObject({ passesRunning: 0, isolatesLive: 5 });
    await Promise.all(Array.from({ length: 5 }, () => executor.runPass(request("return 2"))));
    expect(executor.stats().passesReused).toBe(5);
    await expect.poll(() => executor.stats().isolatesLive, { timeout: 3_000 }).toBe(1);
    await executor.runPass(request("return 3"));
    expect(executor.stats().passesReused).toBe(6);
  });

  it("R-SB-3: many passes at once over warm isolates that aged out while idle all get an isolate", async () => {
    // Taking a warm isolate awaits its next context; other takes meanwhile shrink the idle list,
    // and a take that walked it by index read past its end ("Cannot read properties of undefined").
    const executor = reusingExecutor({ isolateReuse: { maxAgeMs: 300 } });
    const wave = () => Promise.all(Array.from({ length: 30 }, () => executor.runPass(request("await null; return 1"))));
    await wave();
    await new Promise((resolve) => setTimeout(resolve, 500));
    const results = await wave();
    expect(results.map((result) => result.status)).toEqual(Array.from({ length: 30 }, () => "returned"));
  });

  it("maxPasses and maxHeapMb retire an isolate; isolateReuse's options are checked", async () => {
    const executor = reusingExecutor({ isolateReuse: { maxPasses: 2, maxIdle: 1 } });
    for (let pass = 0; pass < 6; pass++) await executor.runPass(request("return 1"));
    // Of 6 passes, isolates of 2 passes each: 3 isolates, 3 reused passes.
    expect(executor.stats().passesReused).toBe(3);
    // A committed heap above maxHeapMb (a fresh isolate holds about 2 MB) retires it after each pass.
    const small = reusingExecutor({ isolateReuse: { maxHeapMb: 1 } });
    for (let pass = 0; pass < 3; pass++) await small.runPass(request("return 1"));
    expect(small.stats()).toMatchObject({ passesReused: 0, isolatesLive: 0 });
    expect(() => createIsolatedVmExecutor({ isolateReuse: { maxHeapMb: 0 } })).toThrow(/maxHeapMb must be a number/);
    expect(() => createIsolatedVmExecutor({ isolateReuse: { maxPasses: 0 } })).toThrow(
      /maxPasses must be a whole number/,
    );
    expect(() => createIsolatedVmExecutor({ isolateReuse: { maxHeapShare: 2 } })).toThrow(
      /maxHeapShare must be a number/,
    );
    expect(() => createIsolatedVmExecutor({ isolateReuse: "yes" as never })).toThrow(/isolateReuse must be/);
    expect(() => createIsolatedVmExecutor({ isolateReuse: { maxIdleMs: -1 } })).toThrow(
      /maxIdleMs must be a whole number/,
    );
  });
});
