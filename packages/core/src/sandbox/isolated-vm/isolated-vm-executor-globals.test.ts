/** The isolated-vm executor: the globals a program finds, its console and its timers. */
import { describe, expect, it } from "vitest";
import { echo, encode, expectReturned, isolatedVmExecutorForTests } from "../pass-fixtures.js";

const { run } = isolatedVmExecutorForTests();

describe("R-SB-1 globals", () => {
  it("R-SB-1: each connector, codemode, console, crypto and pass-scoped timers are globals", async () => {
    const value = expectReturned(
      await run(
        "async () => [typeof github, typeof github.get, typeof github.create_issue, typeof codemode, typeof codemode.step, typeof console.log, typeof crypto.randomUUID, typeof setTimeout, typeof clearInterval, typeof queueMicrotask]",
      ),
    );
    expect(value).toEqual([
      "object",
      "function",
      "function",
      "object",
      "function",
      "function",
      "function",
      "function",
      "function",
      "function",
    ]);
  });

  it("R-SB-1: a connector global has exactly its configured methods", async () => {
    const value = expectReturned(
      await run("async () => ({ github: Object.keys(github), slack: Object.keys(slack) })", {
        connectors: { github: ["get"], slack: ["post", "list"] },
      }),
    );
    expect(value).toEqual({ github: ["get"], slack: ["post", "list"] });
  });

  it("R-SB-1: require, process, fetch and the other host globals are absent", async () => {
    const value = expectReturned(
      await run(
        "async () => [typeof require, typeof process, typeof fetch, typeof Buffer, typeof module, typeof exports, typeof global, typeof setImmediate, typeof WebAssembly, typeof __codemode_start, typeof XMLHttpRequest]",
      ),
    );
    expect(value).toEqual(Array(11).fill("undefined"));
  });

  it("R-SB-1: ECMAScript built-ins work", async () => {
    const value = expectReturned(
      await run(
        "async () => [JSON.stringify({ a: [1] }), [3, 1, 2].toSorted().join(), new Map([[1, 2]]).get(1), Object.groupBy([1, 2, 3], (n) => n % 2 ? 'odd' : 'even').odd.length, /a(b)/.exec('ab')[1], 2n ** 64n === 18446744073709551616n]",
      ),
    );
    expect(value).toEqual(['{"a":[1]}', "1,2,3", 2, 2, "b", true]);
  });

  it("R-SB-1: codemode services exist only when the host answers them, and take no seq", async () => {
    const without = expectReturned(await run("async () => [typeof codemode.search, typeof codemode.describe]"));
    expect(without).toEqual(["undefined", "undefined"]);
    const outcome = await run(
      "async () => { const found = await codemode.search('open issues'); const docs = await codemode.describe('github.get'); const call = await github.get({}); return { found, docs, seq: call.seq } }",
      {
        services: ["search", "describe"],
      },
    );
    expect(expectReturned(outcome)).toEqual({
      found: { service: "search", args: "open issues" },
      docs: { service: "describe", args: "github.get" },
      seq: 0,
    });
    expect(outcome.requests.slice(0, 2)).toEqual([
      { type: "service", name: "search", args: '"open issues"' },
      { type: "service", name: "describe", args: '"github.get"' },
    ]);
  });

  it("R-SB-5: allowNetwork gives a fetch answered by the host, numbered like a step, with a Response-like result", async () => {
    const response = {
      url: "https://example.com/a",
      status: 200,
      statusText: "OK",
      headers: { "content-type": "application/json" },
      body: '{"hello":"world"}',
    };
    const outcome = await run(
      "async () => { const page = await fetch('https://example.com/a', { method: 'GET' }); const call = await github.get({}); return { ok: page.ok, status: page.status, type: page.headers.get('Content-Type'), body: await page.json(), seq: call.seq } }",
      {
        allowNetwork: true,
        answer: (request) =>
          request.type === "service" && request.name === "fetch"
            ? { kind: "value", value: encode(response) }
            : echo(request),
      },
    );
    expect(expectReturned(outcome)).toEqual({
      ok: true,
      status: 200,
      type: "application/json",
      body: { hello: "world" },
      seq: 1,
    });
    expect(outcome.requests[0]).toEqual({
      type: "service",
      name: "fetch",
      seq: 0,
      args: encode({ input: "https://example.com/a", init: { method: "GET", headers: {}, body: null } }),
    });
  });
});

describe("console capture (R-SB-1)", () => {
  it("R-SB-1: console output is captured; warn and error are prefixed", async () => {
    const outcome = await run(
      "async () => { console.log('plain', 1, { a: [1n] }); console.info('info'); console.debug('debug'); console.warn('careful'); console.error('broken', null); return 1; }",
    );
    expect(outcome.result).toEqual({
      status: "returned",
      value: "1",
      logs: ['plain 1 {"a":[{"$cm":"bigint","v":"1"}]}', "info", "debug", "[warn] careful", "[error] broken null"],
    });
  });

  it("R-SB-1: logs survive a failing pass", async () => {
    const outcome = await run("async () => { console.log('before'); throw new Error('after'); }");
    expect(outcome.result).toMatchObject({ status: "failed", code: "PROGRAM_ERROR", logs: ["before"] });
  });

  it("R-SB-1: errors and functions are printed readably", async () => {
    const outcome = await run(
      "async () => { console.log(new TypeError('bad'), function named() {}, undefined, Symbol('s')); }",
    );
    const line = outcome.result.logs[0]!;
    expect(line).toMatch(/^TypeError: bad\n/);
    expect(line).toMatch(/\[Function named\] undefined Symbol\(s\)$/);
  });
});

describe("timers within a pass", () => {
  it("R-SB-1: setTimeout, setInterval, clear* and queueMicrotask work and take no seq", async () => {
    const outcome = await run(
      `async () => {
        const order = [];
        // 'later' waits far longer than the host takes between two requests on a loaded machine:
        // each timer starts when its request reaches the host (see install-timers.ts).
        setTimeout(() => order.push('later'), 300);
        setTimeout((label) => order.push(label), 0, 'soon');
        const cancelled = setTimeout(() => order.push('cancelled'), 5);
        clearTimeout(cancelled);
        let ticks = 0;
        await new Promise((resolve) => { const id = setInterval(() => { ticks++; if (ticks === 3) { clearInterval(id); resolve(); } }, 5); });
        queueMicrotask(() => order.push('microtask'));
        await new Promise((resolve) => setTimeout(resolve, 400));
        const call = await github.get({});
        return { order, ticks, seq: call.seq };
      }`,
    );
    const value = expectReturned(outcome) as { order: string[]; ticks: number; seq: number };
    expect([...value.order].sort()).toEqual(["later", "microtask", "soon"]);
    expect(value.order.indexOf("soon")).toBeLessThan(value.order.indexOf("later"));
    expect(value.ticks).toBe(3);
    expect(value.seq).toBe(0);
    expect(outcome.requests).toHaveLength(1);
  });
});
