/** The isolated-vm executor: time and memory limits, failed passes and passes side by side. */
import { describe, expect, it } from "vitest";
import {
  createExecutorForTests,
  expectFailed,
  expectReturned,
  isolatedVmExecutorForTests,
  sleep,
} from "../pass-fixtures.js";

const { run } = isolatedVmExecutorForTests();

describe("R-SB-3 limits", () => {
  it("R-SB-3: TIMEOUT names the limit set on the request", async () => {
    const error = expectFailed(await run("async () => { while (true) {} }", { timeoutMs: 300 }), "TIMEOUT");
    expect(error).toContain("300 ms");
  });

  it("R-SB-3: TIMEOUT names the executor's default limit when the request sets none", async () => {
    const short = createExecutorForTests({ timeoutMs: 250 });
    try {
      const error = expectFailed(
        await run("async () => { await new Promise(() => {}); }", { run: (request) => short.runPass(request) }),
        "TIMEOUT",
      );
      expect(error).toContain("250 ms");
    } finally {
      await short.close();
    }
  });

  it("R-SB-3: MEMORY_LIMIT names the heap limit", async () => {
    const error = expectFailed(
      await run("async () => { const keep = []; while (true) keep.push(new Array(100000).fill(keep.length)); }", {
        memoryMb: 32,
      }),
      "MEMORY_LIMIT",
    );
    expect(error).toContain("32 MB");
  });

  it("R-SB-3: MEMORY_LIMIT names the executor's default heap limit when the request sets none", async () => {
    const small = createExecutorForTests({ memoryMb: 24 });
    try {
      const error = expectFailed(
        await run("async () => { const keep = []; while (true) keep.push(new Array(100000).fill(1)); }", {
          run: (request) => small.runPass(request),
        }),
        "MEMORY_LIMIT",
      );
      expect(error).toContain("24 MB");
    } finally {
      await small.close();
    }
  });

  it("R-SB-3: the executor keeps working after a failed pass, and every pass starts fresh", async () => {
    expectFailed(await run("globalThis.leftover = 'from before'; while (true) {}", { timeoutMs: 200 }), "TIMEOUT");
    expect(expectReturned(await run("typeof globalThis.leftover"))).toBe("undefined");
    expect(expectReturned(await run("Object.prototype.polluted = 1; 'set'"))).toBe("set");
    expect(expectReturned(await run("({}).polluted === undefined"))).toBe(true);
  });

  it("R-SB-3: passes running at the same time stay apart", async () => {
    const code =
      "async () => { const a = await github.get({ who: WHO }); await new Promise((r) => setTimeout(r, 20)); const b = await github.get({ who: WHO }); return [a.seq, b.seq, b.args.who, Math.random()] }";
    const [one, two] = await Promise.all([
      run(code.replaceAll("WHO", "'one'"), { deterministic: { seed: "one", clockMs: 0 } }),
      run(code.replaceAll("WHO", "'two'"), { deterministic: { seed: "two", clockMs: 0 } }),
    ]);
    const first = expectReturned(one) as unknown[];
    const second = expectReturned(two) as unknown[];
    expect(first.slice(0, 3)).toEqual([0, 1, "one"]);
    expect(second.slice(0, 3)).toEqual([0, 1, "two"]);
    expect(first[3]).not.toBe(second[3]);
  });

  it("R-SB-3: close() ends a pass that is still running instead of leaving it hanging", async () => {
    const closing = createExecutorForTests({ timeoutMs: 10_000 });
    const pending = run("async () => { await github.get({}); while (true) {} }", {
      run: (request) => closing.runPass(request),
    });
    await sleep(100);
    await closing.close();
    const outcome = await pending;
    expect(outcome.result.status).toBe("failed");
  });
});
