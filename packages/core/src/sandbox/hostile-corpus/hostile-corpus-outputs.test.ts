/**
 * Hostile corpus (see hostile-corpus-fixtures.ts): huge results, logs, messages and values, which
 * are cut or refused inside the sandbox before they are copied to the host.
 */
import { describe, expect, it } from "vitest";
import { expectFailed, expectReturned, onQuickJs } from "../pass-fixtures.js";
import { hostileCorpus } from "./hostile-corpus-fixtures.js";

const { run } = hostileCorpus();

describe("huge outputs", () => {
  it("R-DV-2: a 50 MB string result comes back whole", async () => {
    // QuickJS counts the result's copies in the sandbox's memory (its wire text, and the UTF-8
    // copy the host reads it from); V8 copies the result out of the isolate's heap.
    const outcome = await run("async () => 'x'.repeat(50 * 1024 * 1024)", {
      timeoutMs: 10_000,
      ...(onQuickJs ? { memoryMb: 256 } : {}),
    });
    expect(outcome.result.status).toBe("returned");
    const value = outcome.value as string;
    expect(value.length).toBe(50 * 1024 * 1024);
    expect(value.startsWith("xxxx") && value.endsWith("xxxx")).toBe(true);
  });

  it("R-SB-1: console.log flooding is capped with a note", async () => {
    const outcome = await run("async () => { for (let i = 0; i < 5000; i++) console.log('line', i); return 'done'; }", {
      timeoutMs: 20_000,
    });
    expect(expectReturned(outcome)).toBe("done");
    expect(outcome.result.logs).toHaveLength(1_001);
    expect(outcome.result.logs[999]).toBe("line 999");
    expect(outcome.result.logs[1_000]).toBe("[logs truncated: more than 1000 lines]");
  });

  it("R-SB-1: a 5 MB log line is cut to the line limit", async () => {
    const outcome = await run("async () => { console.warn('y'.repeat(5 * 1024 * 1024)); return 1; }", {
      timeoutMs: 10_000,
    });
    const line = outcome.result.logs[0]!;
    expect(line.startsWith("[warn] yyy")).toBe(true);
    expect(line.length).toBeLessThan(10_100);
    expect(line).toContain(`[${5 * 1024 * 1024 - 10_000} more characters]`);
  });

  it("R-SB-1: console.log with hostile arguments logs something and goes on", async () => {
    const outcome = await run(`async () => {
      const cyclic = {}; cyclic.self = cyclic;
      const trap = new Proxy({}, { get() { throw new Error('trap'); }, ownKeys() { throw new Error('trap'); }, getPrototypeOf() { throw new Error('trap'); } });
      console.log({ get bad() { throw new Error('getter'); } }, cyclic, trap, Symbol('s'), 10n, Object.create(null), { toString() { throw new Error('toString'); } });
      return 'survived';
    }`);
    expect(expectReturned(outcome)).toBe("survived");
    expect(outcome.result.logs).toHaveLength(1);
  });
});

describe("strings are cut inside the sandbox, before they are copied to the host (issue 17.1)", () => {
  /** 520,093,696 characters built by doubling: a few hundred bytes of the sandbox's heap. */
  const HUGE = "let s = ''; let p = 'x'; for (let i = 0; i < 29; i++) { if (i >= 24) s += p; if (i < 28) p += p; }";

  it("R-SB-3: a 520M-character string logged is described by its length, never read or copied", async () => {
    const outcome = await run(`async () => { ${HUGE} console.log('big:', s); console.error(s); return s.length; }`, {
      memoryMb: 16,
    });
    expect(expectReturned(outcome)).toBe(520_093_696);
    expect(outcome.result.logs).toEqual(["big:… [520093697 more characters]", "[error] … [520093696 more characters]"]);
  });

  it("R-SB-3: console output of a pass is bounded in characters as well as lines", async () => {
    const outcome = await run(
      "async () => { const line = 'z'.repeat(5000); for (let i = 0; i < 900; i++) console.log(line); return 'done'; }",
      { timeoutMs: 10_000 },
    );
    expect(expectReturned(outcome)).toBe("done");
    const total = outcome.result.logs.reduce((sum, line) => sum + line.length, 0);
    expect(total).toBeLessThanOrEqual(1_000_000 + 100);
    expect(outcome.result.logs.at(-1)).toBe("[logs truncated: more than 1000000 characters]");
  });

  it("R-SB-3: a thrown message is cut to 10,000 characters, with a note of what was left out", async () => {
    const error = expectFailed(await run("async () => { throw new Error('m'.repeat(50_000)); }"), "PROGRAM_ERROR");
    expect(error.length).toBeLessThan(10_100);
    expect(error).toContain("… [40000 more characters]");
  });

  it("R-SB-3: a message too long to read is described by its length", async () => {
    if (onQuickJs) {
      // QuickJS flattens an error's message when the error is made: 520M characters do not fit
      // in 16 MB, and the pass ends at its memory limit before anything is read.
      expectFailed(await run(`async () => { ${HUGE} throw new RangeError(s); }`, { memoryMb: 16 }), "MEMORY_LIMIT");
      return;
    }
    const error = expectFailed(
      await run(`async () => { ${HUGE} throw new RangeError(s); }`, { memoryMb: 16 }),
      "PROGRAM_ERROR",
    );
    expect(error).toMatch(/^RangeError: \[520093696 characters, not shown\]/);
  });

  it("R-DV-1: an argument over maxValueChars is never sent: the host learns only its size", async () => {
    const outcome = await run("async () => { await github.get({ s: 'a'.repeat(2_000_000) }); return 'went on'; }", {
      maxValueChars: 1_000_000,
    });
    expect(outcome.result.status).toBe("halted");
    expect(outcome.requests).toEqual([
      { type: "invalid", seq: 0, message: "the argument of github.get", size: 2_000_008 },
    ]);
  });

  it("R-DV-1: a step name or value over maxValueChars is never sent", async () => {
    const named = await run("async () => { await codemode.step('n'.repeat(2_000), () => 1); return 'went on'; }", {
      maxValueChars: 1_000,
    });
    expect(named.requests).toEqual([{ type: "invalid", seq: 0, message: "the name of a codemode.step", size: 2_000 }]);
    const valued = await run(
      "async () => { await codemode.step('render', () => 'v'.repeat(2_000)); return 'went on'; }",
      { maxValueChars: 1_000 },
    );
    expect(valued.requests).toEqual([
      { type: "invalid", seq: 0, message: 'the result of codemode.step("render")', size: 2_002 },
    ]);
  });

  it("R-SB-3: why a value cannot be encoded is cut, even when a key is huge", async () => {
    const outcome = await run("async () => { await github.get({ ['k'.repeat(5e6)]: () => 1 }); }", { memoryMb: 64 });
    const [request] = outcome.requests;
    expect(request).toMatchObject({ type: "invalid", seq: 0 });
    expect((request as { message: string }).message.length).toBeLessThan(10_100);
  });
});
