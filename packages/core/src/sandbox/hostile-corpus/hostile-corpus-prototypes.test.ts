/**
 * Hostile corpus (see hostile-corpus-fixtures.ts): programs that poison prototypes or replace
 * built-ins before they call the host or return, to change what crosses the bridge.
 */
import { describe, expect, it } from "vitest";
import { encode, expectFailed, expectReturned } from "../pass-fixtures.js";
import { expectWellFormed, hostileCorpus } from "./hostile-corpus-fixtures.js";

const { run } = hostileCorpus();

describe("poisoned prototypes before calls and returns", () => {
  it("R-SB-4: Object.prototype.toJSON cannot forge or change what the host receives", async () => {
    const outcome = await run(`async () => {
      Object.prototype.toJSON = function () { return { type: 'call', seq: 99, connector: 'github', method: 'delete_everything', args: '{}' }; };
      const a = await github.get({ a: 1 });
      const s = await codemode.step('s', () => ({ b: 2 }));
      return [a.seq, s];
    }`);
    expect(outcome.requests).toEqual([
      { type: "call", seq: 0, connector: "github", method: "get", args: '{"a":1}' },
      { type: "step", seq: 1, name: "s", seqAfter: 2, value: '{"b":2}' },
    ]);
    expect(outcome.result).toMatchObject({ status: "returned", value: '[0,{"b":2}]' });
  });

  it("R-SB-4: setters on Object.prototype for request fields cannot drop or change them", async () => {
    const outcome = await run(`async () => {
      for (const key of ['type', 'seq', 'name', 'args', 'value', 'error', 'message', 'seqAfter', 'connector', 'method', 'resolve', 'reject', 'decode']) {
        Object.defineProperty(Object.prototype, key, { __proto__: null, set() { throw new Error('setter ' + key); }, get() { return 'poisoned'; }, configurable: true });
      }
      const a = await github.get({ x: 1 });
      await codemode.step('ok', () => 1);
      let stepError;
      try { await codemode.step('bad', () => { throw new Error('inner'); }); } catch (error) { stepError = error.message; }
      return [a.seq, stepError];
    }`);
    expectWellFormed(outcome.requests);
    expect(outcome.requests).toEqual([
      { type: "call", seq: 0, connector: "github", method: "get", args: '{"x":1}' },
      { type: "step", seq: 1, name: "ok", seqAfter: 2, value: "1" },
      { type: "step", seq: 2, name: "bad", seqAfter: 3, error: "Error: inner" },
    ]);
    expect(outcome.result.status).toBe("returned");
  });

  it("R-SB-4: a poisoned Array.prototype does not change arguments or results", async () => {
    const outcome = await run(`async () => {
      Array.prototype.push = function () { throw new Error('push'); };
      Array.prototype.join = () => 'poisoned';
      Array.prototype.map = () => ['poisoned'];
      Array.prototype.sort = () => ['poisoned'];
      Object.defineProperty(Array.prototype, '0', { set() { throw new Error('index setter'); }, get() { return 'poisoned'; }, configurable: true });
      Object.defineProperty(Array.prototype, 'length', { value: 0, writable: true });
      const r = await github.get({ list: [1, 2, 3] });
      return { list: r.args.list.length, result: [4, 5] };
    }`);
    expectWellFormed(outcome.requests);
    expect(outcome.requests[0]).toEqual({
      type: "call",
      seq: 0,
      connector: "github",
      method: "get",
      args: '{"list":[1,2,3]}',
    });
    expect(expectReturned(outcome)).toEqual({ list: 3, result: [4, 5] });
  });

  it("R-SB-4: a poisoned Promise.prototype.then changes neither requests nor the values the bridge delivers", async () => {
    const outcome = await run(`async () => {
      const realThen = Promise.prototype.then;
      Promise.prototype.then = function (onFulfilled, onRejected) { return realThen.call(this, (v) => onFulfilled && onFulfilled({ hijacked: v }), onRejected); };
      const r = await github.get({ n: 1 });
      const s = await codemode.step('s', () => 2);
      return { seq: r.seq, s };
    }`);
    expect(outcome.requests).toEqual([
      { type: "call", seq: 0, connector: "github", method: "get", args: '{"n":1}' },
      { type: "step", seq: 1, name: "s", seqAfter: 2, value: "2" },
    ]);
    // r and s arrive untouched; only the program's own return passes through its own `then`.
    expect(expectReturned(outcome)).toEqual({ hijacked: { seq: 0, s: 2 } });
  });

  it("R-SB-4: a throwing Promise.prototype.constructor leaves requests well-formed and the pass coded", async () => {
    const outcome = await run(`async () => {
      Object.defineProperty(Promise.prototype, 'constructor', { get() { throw new Error('constructor trap'); } });
      const r = await github.get({ n: 1 });
      return r;
    }`);
    expect(outcome.requests).toEqual([{ type: "call", seq: 0, connector: "github", method: "get", args: '{"n":1}' }]);
    // The trap is the program's own: QuickJS reports it thrown from the program (PROGRAM_ERROR);
    // isolated-vm meets it where the start wrapper reports the result (SANDBOX_ERROR). Coded either way.
    expect(outcome.result).toMatchObject({ status: "failed" });
    expect(["PROGRAM_ERROR", "SANDBOX_ERROR"]).toContain(outcome.result.status === "failed" ? outcome.result.code : "");
    expect(outcome.result.status === "failed" ? outcome.result.error : "").toContain("constructor trap");
  });

  it("R-SB-4: an inherited $cm tag on Object.prototype does not change encoded arguments", async () => {
    const outcome = await run(`async () => {
      Object.defineProperty(Object.prototype, '$cm', { get() { return 'bigint'; }, configurable: true });
      Object.defineProperty(Object.prototype, 'v', { get() { return '1'; }, configurable: true });
      try { await github.get({ plain: { nested: true } }); } catch (error) { return 'decode refused: ' + error.message; }
      return 'decoded';
    }`);
    expect(outcome.requests).toEqual([
      { type: "call", seq: 0, connector: "github", method: "get", args: '{"plain":{"nested":true}}' },
    ]);
    expect(outcome.result.status).toBe("returned");
  });

  it("R-SB-4: making every object thenable stays contained", async () => {
    const outcome = await run(`async () => {
      Object.prototype.then = function (resolve) { resolve('hijacked'); };
      const r = await github.get({ a: 1 });
      return { r };
    }`);
    expectWellFormed(outcome.requests);
    expect(outcome.requests[0]).toEqual({ type: "call", seq: 0, connector: "github", method: "get", args: '{"a":1}' });
    expect(outcome.result).toMatchObject({ status: "returned", value: '"hijacked"' });
  });

  it("R-SB-2: a throwing Object.prototype.toJSON does not stop a throw from being reported", async () => {
    const outcome = await run(
      "async () => { Object.prototype.toJSON = () => { throw new Error('toJSON trap'); }; throw new Error('real failure'); }",
    );
    expectFailed(outcome, "PROGRAM_ERROR", "Error: real failure");
  });
});

describe("replaced built-ins before calls and returns", () => {
  it("R-SB-4: an overwritten JSON.stringify and JSON.parse do not change the wire", async () => {
    const outcome = await run(`async () => {
      JSON.stringify = () => '{"type":"call","seq":7,"connector":"github","method":"forged","args":""}';
      JSON.parse = () => ({ forged: true });
      const r = await github.get({ n: 1 });
      return { seq: r.seq, n: r.args.n };
    }`);
    expect(outcome.requests).toEqual([{ type: "call", seq: 0, connector: "github", method: "get", args: '{"n":1}' }]);
    expect(expectReturned(outcome)).toEqual({ seq: 0, n: 1 });
  });

  it("R-SB-4: overwritten Map, Reflect, Object and Function.prototype helpers do not change the wire", async () => {
    const outcome = await run(`async () => {
      Map.prototype.get = () => undefined;
      Map.prototype.set = () => { throw new Error('map'); };
      Map.prototype.delete = () => false;
      Reflect.apply = () => { throw new Error('apply'); };
      Object.keys = () => ['forged'];
      Object.defineProperty = () => { throw new Error('define'); };
      Object.freeze = (o) => o;
      Function.prototype.call = function () { throw new Error('call'); };
      Function.prototype.apply = function () { throw new Error('apply'); };
      Function.prototype.bind = function () { throw new Error('bind'); };
      String.prototype.slice = () => 'poisoned';
      const r = await github.get({ keep: 'me' });
      return { seq: r.seq, keep: r.args.keep };
    }`);
    expect(outcome.requests).toEqual([
      { type: "call", seq: 0, connector: "github", method: "get", args: '{"keep":"me"}' },
    ]);
    expect(expectReturned(outcome)).toEqual({ seq: 0, keep: "me" });
  });

  it("R-SB-4: spoofed bigint text, typed array length, toStringTag and toISOString do not change what crosses", async () => {
    const outcome = await run(`async () => {
      BigInt.prototype.toString = () => '666';
      Date.prototype.toISOString = () => 'forged';
      const bytes = new Uint8Array([1, 2, 3]);
      Object.defineProperty(bytes, 'length', { value: 100000000 });
      const fakeBytes = { [Symbol.toStringTag]: 'Uint8Array', length: 2, 0: 9, 1: 9 };
      await github.get({ big: 5n, bytes, fakeBytes, when: new Date(0) });
      return { big: 7n, bytes };
    }`);
    expect(outcome.requests).toEqual([
      {
        type: "call",
        seq: 0,
        connector: "github",
        method: "get",
        args: '{"big":{"$cm":"bigint","v":"5"},"bytes":{"$cm":"bytes","v":"AQID"},"fakeBytes":{"0":9,"1":9,"length":2},"when":"1970-01-01T00:00:00.000Z"}',
      },
    ]);
    expect(expectReturned(outcome)).toEqual({ big: 7n, bytes: new Uint8Array([1, 2, 3]) });
  });

  it("R-SB-2: a poisoned Error.prepareStackTrace does not stop a throw from being reported", async () => {
    const outcome = await run(
      "async () => { Error.prepareStackTrace = () => { throw new Error('stack trap'); }; throw new Error('real failure'); }",
    );
    expectFailed(outcome, "PROGRAM_ERROR", "real failure");
  });

  it("R-SB-4: replaced Error, Promise, Uint8Array and Object globals do not change what the program receives", async () => {
    const outcome = await run(
      `async () => {
      const RealError = Error;
      globalThis.Error = function FakeError() { return { fake: true }; };
      globalThis.Promise = function FakePromise() { throw new RealError('no promises'); };
      globalThis.Uint8Array = function FakeBytes() { return []; };
      globalThis.Object = function FakeObject() {};
      const r = await github.get({});
      let message;
      try { await github.create_issue({}); } catch (error) { message = [error instanceof RealError, error.message]; }
      return { bytes: r.bytes.length, message };
    }`,
      {
        answer: (request) =>
          request.type === "call" && request.method === "create_issue"
            ? { kind: "error", message: "host said no" }
            : { kind: "value", value: encode({ bytes: new Uint8Array([1, 2]) }) },
      },
    );
    expect(expectReturned(outcome)).toEqual({ bytes: 2, message: [true, "host said no"] });
  });
});
