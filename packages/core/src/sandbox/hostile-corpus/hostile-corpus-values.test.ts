/**
 * Hostile corpus (see hostile-corpus-fixtures.ts): returned values and connector arguments that
 * cannot be encoded, lie about themselves or run code while they are read.
 */
import { describe, expect, it } from "vitest";
import { expectFailed, expectHaltedOnInvalid, expectReturned, sleep } from "../pass-fixtures.js";
import { expectWellFormed, hostileCorpus } from "./hostile-corpus-fixtures.js";

const { run } = hostileCorpus();

describe("returned values (R-SB-4, R-DV-1)", () => {
  // [test name, program, what the message must contain (undefined: any message)]: each returns a
  // value that cannot be encoded, and the pass fails with NOT_SERIALIZABLE.
  // One row per test; the test is written once, below.
  const unencodable: Array<[string, string, string | undefined]> = [
    [
      "R-DV-1: a returned object with a throwing getter is NOT_SERIALIZABLE",
      "async () => ({ ok: 1, get broken() { throw new Error('getter exploded'); } })",
      "getter exploded",
    ],
    [
      "R-DV-1: a getter that throws a hostile Proxy is still NOT_SERIALIZABLE",
      "async () => { const trap = new Proxy({}, { getPrototypeOf() { throw new Error('trap'); }, get() { throw new Error('trap'); } }); return { get x() { throw trap; } }; }",
      undefined,
    ],
    [
      "R-DV-1: a Proxy whose ownKeys trap throws is NOT_SERIALIZABLE",
      "async () => new Proxy({}, { ownKeys() { throw new Error('ownKeys trap'); } })",
      "ownKeys trap",
    ],
    [
      "R-DV-1: a Proxy of an array whose get trap throws is NOT_SERIALIZABLE",
      "async () => ({ list: new Proxy([1, 2], { get() { throw new Error('get trap'); } }) })",
      undefined,
    ],
    [
      "R-DV-1: a returned cycle is NOT_SERIALIZABLE",
      "async () => { const a = { b: {} }; a.b.a = a; return a; }",
      "circular reference at b.a",
    ],
    [
      "R-DV-1: a 100k-deep array is NOT_SERIALIZABLE, not a stack overflow",
      "async () => { let a = []; for (let i = 0; i < 100000; i++) a = [a]; return a; }",
      "nested more than 512 levels deep",
    ],
    [
      "R-DV-1: a getter on the returned object that recurses without end is coded, not a crash",
      "async () => { const deep = (n) => deep(n + 1) + 1; return { get x() { return deep(0); } }; }",
      "Maximum call stack size exceeded",
    ],
  ];
  for (const [name, program, containing] of unencodable) {
    it(name, async () => {
      expectFailed(await run(program), "NOT_SERIALIZABLE", containing);
    });
  }

  it("R-SB-4: a lying Proxy crosses only as the plain data it reports", async () => {
    const outcome = await run(
      "async () => new Proxy({}, { ownKeys: () => ['a', 'b'], getOwnPropertyDescriptor: () => ({ value: 1, enumerable: true, configurable: true }), get: (target, key) => key === 'a' ? 1 : 'two' })",
    );
    expect(outcome.result).toMatchObject({ status: "returned", value: '{"a":1,"b":"two"}' });
  });

  it("R-DV-1: a returned symbol is NOT_SERIALIZABLE; symbol keys are dropped", async () => {
    expectFailed(await run("async () => Symbol('s')"), "NOT_SERIALIZABLE");
    expect((await run("async () => ({ [Symbol('hidden')]: 1, shown: 2 })")).result).toMatchObject({
      status: "returned",
      value: '{"shown":2}',
    });
  });

  it("R-DV-1: a returned function, or one inside the result, is NOT_SERIALIZABLE naming where", async () => {
    expectFailed(await run("async () => function escape() { return globalThis; }"), "NOT_SERIALIZABLE");
    expectFailed(
      await run("async () => ({ data: [1, { callback: () => 1 }] })"),
      "NOT_SERIALIZABLE",
      "data[1].callback",
    );
  });

  it("R-DV-1: returned Map, Set and Promise are NOT_SERIALIZABLE", async () => {
    for (const expression of ["new Map([[1, 2]])", "new Set([1])", "({ pending: new Promise(() => {}) })"]) {
      expectFailed(await run(`async () => ${expression}`), "NOT_SERIALIZABLE");
    }
  });

  it("R-RP-7: a getter on the returned object that calls a connector is delivered before the pass ends", async () => {
    const outcome = await run("async () => ({ get x() { github.create_issue({ fromGetter: true }); return 1; } })");
    expect(expectReturned(outcome)).toEqual({ x: 1 });
    expect(outcome.requests).toEqual([
      { type: "call", seq: 0, connector: "github", method: "create_issue", args: '{"fromGetter":true}' },
    ]);
    await sleep(50);
    expect(outcome.lateRequests()).toBe(0);
  });

  it("R-SB-3: a getter on the returned object that loops forever is a TIMEOUT", async () => {
    expectFailed(await run("async () => ({ get x() { for (;;) {} } })", { timeoutMs: 500 }), "TIMEOUT");
  });
});

describe("connector arguments (R-SB-4, R-DV-1)", () => {
  it("R-SB-4: a connector called with more than one argument rejects in the sandbox and sends nothing", async () => {
    const outcome = await run(
      "async () => { try { await github.get({ a: 1 }, { smuggled: true }); } catch (error) { return error.name + ': ' + error.message; } }",
    );
    expect(expectReturned(outcome)).toBe("TypeError: github.get takes one argument (an object)");
    expect(outcome.requests).toEqual([]);
  });

  // [test name, program, what the invalid request's message must contain]: each sends a value that
  // cannot be encoded, so the sandbox sends an invalid request instead and the host halts the pass.
  // One row per test; the test is written once, below.
  const invalid: Array<[string, string, string]> = [
    [
      "R-DV-1: a connector called with a function argument sends an invalid request; the host halts the pass",
      "async () => { await github.create_issue({ title: 't', onDone: () => process.exit(1) }); return 'went on'; }",
      "a function at onDone",
    ],
    [
      "R-DV-1: a connector called with a symbol argument sends an invalid request; the host halts the pass",
      "async () => { await github.get(Symbol('x')); return 'went on'; }",
      "a symbol at the top level",
    ],
    [
      "R-DV-1: a cyclic argument sends an invalid request; the host halts the pass",
      "async () => { const a = {}; a.self = a; await github.get(a); }",
      "circular reference at self",
    ],
    [
      "R-DV-1: a 100k-deep argument sends an invalid request; the host halts the pass",
      "async () => { let a = {}; for (let i = 0; i < 100000; i++) a = { a }; await github.get(a); }",
      "nested more than 512 levels deep",
    ],
    [
      "R-DV-1: a step whose fn returns a function sends an invalid request; the host halts the pass",
      "async () => { await codemode.step('leak', () => () => globalThis); return 'went on'; }",
      "a function at the top level",
    ],
  ];
  for (const [name, program, message] of invalid) {
    it(name, async () => {
      expectHaltedOnInvalid(await run(program), message);
    });
  }

  it("R-DV-1: an argument getter that throws a hostile Proxy still sends a well-formed invalid request", async () => {
    const outcome = await run(
      "async () => { const trap = new Proxy({}, { getPrototypeOf() { throw new Error('trap'); }, get() { throw new Error('trap'); } }); await github.get({ get x() { throw trap; } }); }",
    );
    expect(outcome.result.status).toBe("halted");
    expect(outcome.requests).toEqual([{ type: "invalid", seq: 0, message: "a value could not be encoded" }]);
  });

  it("R-RP-1: an argument getter that calls another connector yields well-formed requests with distinct seqs", async () => {
    const outcome = await run(
      "async () => { const r = await github.get({ get inner() { github.create_issue({ nested: true }); return 1; } }); return r.seq; }",
    );
    expect(expectReturned(outcome)).toBe(0);
    expectWellFormed(outcome.requests);
    expect(outcome.requests).toEqual([
      { type: "call", seq: 1, connector: "github", method: "create_issue", args: '{"nested":true}' },
      { type: "call", seq: 0, connector: "github", method: "get", args: '{"inner":1}' },
    ]);
  });
});
