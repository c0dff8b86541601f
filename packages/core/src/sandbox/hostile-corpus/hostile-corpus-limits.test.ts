/**
 * Hostile corpus (see hostile-corpus-fixtures.ts): programs that loop, recurse, wait forever or
 * take memory, counted by the heap limit or outside it.
 */
import { describe, expect, it } from "vitest";
import type { HostReply } from "../executor.js";
import { expectFailed, expectReturned, onQuickJs } from "../pass-fixtures.js";
import { hostileCorpus } from "./hostile-corpus-fixtures.js";

const { run } = hostileCorpus();

describe("limits (R-SB-3)", () => {
  it("R-SB-3: deep recursion is a PROGRAM_ERROR, not a host stack overflow", async () => {
    const outcome = await run("async () => { const down = (n) => down(n + 1) + 1; return down(0); }");
    expectFailed(outcome, "PROGRAM_ERROR", "Maximum call stack size exceeded");
  });

  // [test name, program]: each is a TIMEOUT within a 500 ms limit.
  // One row per test; the test is written once, below.
  const endless: Array<[string, string]> = [
    ["R-SB-3: a synchronous infinite loop is a TIMEOUT", "while (true) {}"],
    ["R-SB-3: a loop after an await is a TIMEOUT", "async () => { await github.get({}); for (;;) {} }"],
    ["R-SB-3: a promise that never settles is a TIMEOUT", "async () => { await new Promise(() => {}); }"],
    [
      "R-SB-3: a microtask flood is a TIMEOUT",
      "async () => { const spin = () => Promise.resolve().then(spin); spin(); await new Promise(() => {}); }",
    ],
    [
      "R-SB-3: a loop inside a timer callback is a TIMEOUT",
      "async () => { setTimeout(() => { for (;;) {} }, 5); await new Promise(() => {}); }",
    ],
    [
      "R-SB-3: a setInterval storm with a 0 ms delay is a TIMEOUT",
      "async () => { for (let i = 0; i < 100; i++) setInterval(() => {}, 0); await new Promise(() => {}); }",
    ],
  ];

  it("R-SB-3: a host that never answers is a TIMEOUT", async () => {
    expectFailed(
      await run("async () => github.get({})", { timeoutMs: 500, answer: () => new Promise<HostReply>(() => {}) }),
      "TIMEOUT",
    );
  });

  // [test name, program]: each is a MEMORY_LIMIT on a 32 MB heap, well within 5 s.
  // One row per test; the test is written once, below.
  const bombs: Array<[string, string]> = [
    [
      "R-SB-3: a memory bomb is a MEMORY_LIMIT",
      "async () => { const keep = []; for (;;) keep.push(new Array(100000).fill(keep.length)); }",
    ],
    [
      "R-SB-3: a memory bomb after an await is a MEMORY_LIMIT",
      "async () => { await github.get({}); const keep = []; for (;;) keep.push(new Array(100000).fill(keep.length)); }",
    ],
    [
      "R-SB-3: a memory bomb inside a timer callback is a MEMORY_LIMIT",
      "async () => { setTimeout(() => { const keep = []; for (;;) keep.push(new Array(100000).fill(1)); }, 1); await new Promise(() => {}); }",
    ],
  ];
  const limited = [
    ...endless.map(([name, program]) => ({ name, program, limits: { timeoutMs: 500 }, code: "TIMEOUT" as const })),
    ...bombs.map(([name, program]) => ({
      name,
      program,
      limits: { memoryMb: 32, timeoutMs: 5_000 },
      code: "MEMORY_LIMIT" as const,
    })),
  ];
  for (const { name, program, limits, code } of limited) {
    it(name, async () => {
      expectFailed(await run(program, limits), code);
    });
  }

  it("R-SB-3: a 2 GB ArrayBuffer fails inside the sandbox", async () => {
    const outcome = await run("async () => new ArrayBuffer(2 ** 31).byteLength", { memoryMb: 32 });
    expectFailed(outcome, "PROGRAM_ERROR", "RangeError");
  });

  it("R-SB-3: Atomics.wait on a SharedArrayBuffer ends", async () => {
    const outcome = await run("async () => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0)", {
      timeoutMs: 500,
    });
    expect(outcome.result.status).toBe("failed");
    // isolated-vm waits until the deadline; QuickJS refuses to wait (a TypeError the program did not catch).
    if (outcome.result.status === "failed") expect(["TIMEOUT", "PROGRAM_ERROR"]).toContain(outcome.result.code);
  });
});

describe("memory the heap limit does not count (issue 17.2)", () => {
  // QuickJS has no Intl at all (quickjs-ng is built without ICU): there is nothing to guard, and
  // a program that reads it gets a ReferenceError. The Intl tests check that instead there.
  const expectNoIntl = async (): Promise<void> => {
    expect(expectReturned(await run("async () => [typeof Intl, 'Intl' in globalThis]"))).toEqual(["undefined", false]);
    expectFailed(await run("async () => new Intl.NumberFormat('en').format(1)"), "PROGRAM_ERROR", "ReferenceError");
  };

  it("R-SB-3: a growable SharedArrayBuffer is refused inside the sandbox", async () => {
    const error = expectFailed(
      await run(
        "async () => { const b = new SharedArrayBuffer(16, { maxByteLength: 2 ** 30 }); b.grow(2 ** 25); return b.byteLength; }",
        { memoryMb: 16 },
      ),
      "PROGRAM_ERROR",
    );
    expect(error).toContain("RangeError: SharedArrayBuffer with maxByteLength is not available in the sandbox");
  });

  it("R-SB-3: a resizable ArrayBuffer is refused inside the sandbox, however the options are dressed", async () => {
    const outcome = await run(`async () => {
      const tries = [
        () => new ArrayBuffer(16, { maxByteLength: 2 ** 30 }),
        () => new ArrayBuffer(16, { get maxByteLength() { return 2 ** 30; } }),
        () => new ArrayBuffer(16, Object.assign(() => {}, { maxByteLength: 2 ** 30 })),
        () => Reflect.construct(ArrayBuffer, [16, { maxByteLength: 2 ** 30 }]),
        () => new (new Uint8Array(1).buffer.constructor)(16, { maxByteLength: 2 ** 30 }),
        () => new (class extends ArrayBuffer {})(16, { maxByteLength: 2 ** 30 }),
      ];
      return tries.map((attempt) => { try { return attempt().resizable; } catch (error) { return error.name; } });
    }`);
    expect(expectReturned(outcome)).toEqual([
      "RangeError",
      "RangeError",
      "RangeError",
      "RangeError",
      "RangeError",
      "RangeError",
    ]);
  });

  it("R-SB-3: Intl is guarded on its first read, however the program poisoned prototypes before", async () => {
    if (onQuickJs) return expectNoIntl();
    const outcome = await run(`async () => {
      Object.defineProperty(Object.prototype, 'get', { value: () => 1, configurable: true, writable: true });
      Object.prototype.value = 'poisoned';
      Object.prototype.writable = false;
      Array.prototype[Symbol.iterator] = function* () {};
      Function.prototype.call = Function.prototype.apply = () => 'poisoned';
      Reflect.construct = () => ({});
      Reflect.apply = () => 'poisoned';
      const kept = [];
      try { for (;;) kept.push(new Intl.NumberFormat('en')); } catch (error) { return [kept.length, error.name, typeof Intl.DateTimeFormat]; }
    }`);
    expect(expectReturned(outcome)).toEqual([1_000, "RangeError", "function"]);
  });

  it("R-SB-6: dates are UTC even when the program poisoned prototypes before it first read Date", async () => {
    const outcome = await run(`async () => {
      Object.defineProperty(Object.prototype, 'getHours', { set() {}, configurable: true });
      Object.defineProperty(Object.prototype, 'get', { value: () => 1, configurable: true, writable: true });
      Object.prototype.value = 'poisoned';
      Array.prototype[Symbol.iterator] = function* () {};
      const date = new Date(Date.UTC(2024, 0, 2, 3, 4, 5));
      return [date.getHours(), date.getTimezoneOffset(), String(date), Object.getOwnPropertyDescriptor(globalThis, 'Date').value === Date];
    }`);
    expect(expectReturned(outcome)).toEqual([
      3,
      0,
      "Tue Jan 02 2024 03:04:05 GMT+0000 (Coordinated Universal Time)",
      true,
    ]);
  });

  it("R-SB-6: Intl reads the execution's clock in UTC even after the program poisoned prototypes", async () => {
    if (onQuickJs) return expectNoIntl();
    const outcome = await run(`async () => {
      Object.defineProperty(Object.prototype, 'get', { value: () => 1, configurable: true, writable: true });
      Object.prototype.value = 'poisoned';
      Array.prototype[Symbol.iterator] = function* () {};
      return [new Intl.DateTimeFormat('en-US', { dateStyle: 'short', timeStyle: 'medium' }).format(), Intl.DateTimeFormat().resolvedOptions().timeZone];
    }`);
    expect(expectReturned(outcome)).toEqual(["11/14/23, 10:13:20 PM", "UTC"]);
  });

  it("R-SB-3: more than 1,000 Intl objects in a pass fail inside the sandbox", async () => {
    if (onQuickJs) return expectNoIntl();
    const outcome = await run(
      "async () => { const kept = []; try { for (;;) kept.push(new Intl.DateTimeFormat('en', { timeZone: 'UTC' })); } catch (error) { return [kept.length, error.name]; } }",
      // The cap is a count, not a time: 1,000 formatters take ~0.3 s alone and over 1 s in a loaded full run.
      { memoryMb: 32, timeoutMs: 10_000 },
    );
    expect(expectReturned(outcome)).toEqual([1_000, "RangeError"]);
  });
});
