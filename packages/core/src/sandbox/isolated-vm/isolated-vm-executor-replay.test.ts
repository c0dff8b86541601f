/** The isolated-vm executor: sequence numbers of calls and steps, and replay from the preloaded log. */
import { describe, expect, it } from "vitest";
import type { ReplayEntry } from "../executor.js";
import { echo, encode, expectReturned, isolatedVmExecutorForTests, recordedCall, sleep } from "../pass-fixtures.js";

const { run } = isolatedVmExecutorForTests();

describe("R-RP-1 sequence numbers and R-RP-5 steps", () => {
  it("R-RP-1: calls and steps take seqs in the order the program issues them", async () => {
    const outcome = await run(
      "async () => { const a = await github.get({ n: 'a' }); const s = await codemode.step('stamp', () => 5); const b = await github.create_issue({ n: 'b' }); return [a.seq, s, b.seq]; }",
    );
    expect(expectReturned(outcome)).toEqual([0, 5, 2]);
    expect(outcome.requests.map((request) => [request.type, (request as { seq: number }).seq])).toEqual([
      ["call", 0],
      ["step", 1],
      ["call", 2],
    ]);
  });

  it("R-RP-1: Promise.all keeps call-site order whatever the host latencies", async () => {
    const delays = [80, 0, 40, 10];
    const outcome = await run(
      "async () => { const all = await Promise.all([0, 1, 2, 3].map((n) => github.get({ n }))); return all.map((r) => [r.seq, r.args.n]); }",
      {
        answer: async (request) => {
          if (request.type === "call") await sleep(delays[request.seq] ?? 0);
          return echo(request);
        },
      },
    );
    expect(expectReturned(outcome)).toEqual([
      [0, 0],
      [1, 1],
      [2, 2],
      [3, 3],
    ]);
    expect(outcome.requests.map((request) => (request as { seq: number }).seq)).toEqual([0, 1, 2, 3]);
  });

  it("R-RP-1: calls inside a step take seqs after the step's, and the step reports seqAfter", async () => {
    const outcome = await run(
      "async () => { const inner = await codemode.step('outer', async () => (await github.get({ inside: true })).seq); const next = await github.get({}); return [inner, next.seq]; }",
    );
    expect(expectReturned(outcome)).toEqual([1, 2]);
    expect(outcome.requests.slice(0, 2)).toEqual([
      { type: "call", seq: 1, connector: "github", method: "get", args: '{"inside":true}' },
      { type: "step", seq: 0, name: "outer", seqAfter: 2, value: "1" },
    ]);
  });

  it("R-RP-5: a step request records the value text, and the program sees that value decoded", async () => {
    const outcome = await run(
      "async () => { const value = await codemode.step('pick', () => ({ b: 1n, a: [new Uint8Array([3])] })); return [typeof value.b, value.a[0] instanceof Uint8Array]; }",
    );
    expect(expectReturned(outcome)).toEqual(["bigint", true]);
    expect(outcome.requests).toEqual([
      { type: "step", seq: 0, name: "pick", seqAfter: 1, value: encode({ b: 1n, a: [new Uint8Array([3])] }) },
    ]);
  });

  it("R-RP-5: a step whose fn throws records the error and rejects", async () => {
    const outcome = await run(
      "async () => { try { await codemode.step('fails', () => { throw new RangeError('nope'); }); } catch (error) { return error.message; } }",
    );
    expect(expectReturned(outcome)).toBe("RangeError: nope");
    expect(outcome.requests).toEqual([{ type: "step", seq: 0, name: "fails", seqAfter: 1, error: "RangeError: nope" }]);
  });

  it("R-RP-5: a step that returns undefined records empty value text", async () => {
    const outcome = await run("async () => { await codemode.step('nothing', () => {}); }");
    expect(outcome.requests).toEqual([{ type: "step", seq: 0, name: "nothing", seqAfter: 1, value: "" }]);
  });

  it("R-RP-5: codemode.step checks its arguments", async () => {
    const value = expectReturned(
      await run(
        "async () => { const out = []; for (const args of [[], [''], ['x'], ['x', 1]]) { try { await codemode.step(...args); } catch (error) { out.push(error.name); } } return out; }",
      ),
    );
    expect(value).toEqual(["TypeError", "TypeError", "TypeError", "TypeError"]);
  });
});

describe("R-ST-2 and R-RP-2 replay of recorded calls", () => {
  it("R-ST-2: recorded calls and steps replay inside the sandbox without asking the host", async () => {
    const replay: ReplayEntry[] = [
      recordedCall(0, { b: 2, a: 1 }, { text: encode({ recorded: true, big: 5n }) }),
      recordedCall(1, { title: "t" }, { method: "create_issue", outcome: "error", text: "recorded failure" }),
      { kind: "step", seq: 2, name: "stamp", seqAfter: 3, outcome: "value", text: "12345" },
      { kind: "call", seq: 3, connector: "github", method: "get", canonicalArgs: "", outcome: "value", text: "" },
    ];
    const outcome = await run(
      `async () => {
        const a = await github.get({ a: 1, b: 2 });
        let error;
        try { await github.create_issue({ title: 't' }); } catch (e) { error = e.message; }
        let ran = false;
        const stamp = await codemode.step('stamp', () => { ran = true; return 1; });
        const empty = await github.get();
        const live = await github.get({ n: 4 });
        return { a, error, stamp, ran, empty, liveSeq: live.seq };
      }`,
      { replay },
    );
    expect(expectReturned(outcome)).toEqual({
      a: { recorded: true, big: 5n },
      error: "recorded failure",
      stamp: 12345,
      ran: false,
      empty: undefined,
      liveSeq: 4,
    });
    expect(outcome.requests).toEqual([{ type: "call", seq: 4, connector: "github", method: "get", args: '{"n":4}' }]);
  });

  it("R-RP-2: a recorded call whose arguments differ in value goes to the host", async () => {
    const replay = [recordedCall(0, { a: 1 }, { text: '"recorded"' })];
    const outcome = await run("async () => (await github.get({ a: 2 })).seq", { replay });
    expect(expectReturned(outcome)).toBe(0);
    expect(outcome.requests).toEqual([{ type: "call", seq: 0, connector: "github", method: "get", args: '{"a":2}' }]);
  });

  it("R-RP-2: a recorded call of another method or connector goes to the host", async () => {
    const replay = [
      recordedCall(0, {}, { text: '"recorded"' }),
      recordedCall(1, {}, { connector: "slack", text: '"recorded"' }),
    ];
    const outcome = await run("async () => [await github.create_issue({}), await github.get({})]", { replay });
    expect(outcome.requests.map((request) => [request.type, (request as { seq: number }).seq])).toEqual([
      ["call", 0],
      ["call", 1],
    ]);
  });

  it("R-RP-2: key order of arguments does not matter for replay, nested values do", async () => {
    const replay = [
      recordedCall(0, { filter: { state: "open", labels: ["a", "b"] }, repo: "r" }, { text: '"replayed"' }),
      recordedCall(1, { filter: { labels: ["a", "b"] } }, { text: '"replayed"' }),
    ];
    const outcome = await run(
      "async () => [await github.get({ repo: 'r', filter: { labels: ['a', 'b'], state: 'open' } }), (await github.get({ filter: { labels: ['b', 'a'] } })).seq]",
      { replay },
    );
    expect(expectReturned(outcome)).toEqual(["replayed", 1]);
    expect(outcome.requests).toHaveLength(1);
  });
});

describe("R-RP-5 replay of recorded steps", () => {
  it("R-RP-5: a recorded step replays without running fn and moves past its inner calls", async () => {
    const replay: ReplayEntry[] = [
      { kind: "step", seq: 0, name: "outer", seqAfter: 3, outcome: "value", text: encode({ cached: 1n }) },
    ];
    const outcome = await run(
      "async () => { let ran = false; const v = await codemode.step('outer', async () => { ran = true; await github.get({}); return 0; }); const next = await github.get({}); return { v, ran, next: next.seq }; }",
      { replay },
    );
    expect(expectReturned(outcome)).toEqual({ v: { cached: 1n }, ran: false, next: 3 });
    expect(outcome.requests).toEqual([{ type: "call", seq: 3, connector: "github", method: "get", args: "{}" }]);
  });

  it("R-RP-5: a recorded step error replays as a rejection without running fn", async () => {
    const replay: ReplayEntry[] = [
      { kind: "step", seq: 0, name: "s", seqAfter: 1, outcome: "error", text: "Error: recorded" },
    ];
    const outcome = await run(
      "async () => { let ran = false; try { await codemode.step('s', () => { ran = true; }); } catch (error) { return [error.message, ran]; } }",
      { replay },
    );
    expect(expectReturned(outcome)).toEqual(["Error: recorded", false]);
    expect(outcome.requests).toEqual([]);
  });

  it("R-RP-5: a step with another name at a recorded seq runs fn and asks the host", async () => {
    const replay: ReplayEntry[] = [
      { kind: "step", seq: 0, name: "old-name", seqAfter: 1, outcome: "value", text: "1" },
    ];
    const outcome = await run("async () => codemode.step('new-name', () => 2)", { replay });
    expect(expectReturned(outcome)).toBe(2);
    expect(outcome.requests).toEqual([{ type: "step", seq: 0, name: "new-name", seqAfter: 1, value: "2" }]);
  });
});
