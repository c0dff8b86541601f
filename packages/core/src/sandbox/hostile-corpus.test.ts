/**
 * Programs written to escape, crash, hang or fool the sandbox. Every one must leave the host
 * alive and end as a coded failure or a result that proves it stayed contained.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import type { HostReply, PassRequest, PassResult, ReplayEntry, SandboxRequest } from "./executor.js";
import { createIsolatedVmExecutor } from "./isolated-vm-executor.js";
import { valueCodec } from "./value-codec.js";

const executor = createIsolatedVmExecutor({ timeoutMs: 1_000 });
const unhandledRejection = vi.fn();

beforeAll(() => {
  process.on("unhandledRejection", unhandledRejection);
});

afterEach(async () => {
  // The host is alive and the executor still runs a clean pass after whatever the test did.
  const healthy = await executor.runPass({ code: "1 + 1", connectors: {}, onRequest: async () => ({ kind: "halt" }) });
  expect(healthy).toEqual({ status: "returned", value: "2", logs: [] });
  expect(unhandledRejection).not.toHaveBeenCalled();
});

afterAll(async () => {
  process.off("unhandledRejection", unhandledRejection);
  await executor.close();
});

type Answer = (request: SandboxRequest) => HostReply | Promise<HostReply>;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const encode = (value: unknown): string => valueCodec.encode(value) ?? "";

/** A call echoes its seq and arguments; an invalid request halts, as the runtime does. */
const echo: Answer = (request) => {
  switch (request.type) {
    case "call":
      return {
        kind: "value",
        value: encode({ seq: request.seq, args: request.args === "" ? null : valueCodec.decode(request.args) }),
      };
    case "step":
    case "service":
      return { kind: "value", value: "" };
    case "invalid":
      return { kind: "halt" };
  }
};

interface Run {
  result: PassResult;
  requests: SandboxRequest[];
  value: unknown;
  /** onRequest calls made after runPass resolved. */
  lateRequests: () => number;
}

async function run(
  code: string,
  options: Partial<Omit<PassRequest, "code" | "onRequest">> & { answer?: Answer } = {},
): Promise<Run> {
  const requests: SandboxRequest[] = [];
  let ended = false;
  let late = 0;
  const answer = options.answer ?? echo;
  const result = await executor.runPass({
    connectors: { github: ["get", "create_issue"] },
    deterministic: { seed: "hostile", clockMs: 1_700_000_000_000 },
    ...options,
    code,
    onRequest: async (request) => {
      if (ended) late++;
      requests.push(request);
      return answer(request);
    },
  });
  ended = true;
  const value = result.status === "returned" && result.value !== "" ? valueCodec.decode(result.value) : undefined;
  return { result, requests, value, lateRequests: () => late };
}

function returned(outcome: Run): unknown {
  expect(outcome.result, JSON.stringify(outcome.result).slice(0, 500)).toMatchObject({ status: "returned" });
  return outcome.value;
}

function failed(outcome: Run, code: string): string {
  expect(outcome.result, JSON.stringify(outcome.result).slice(0, 500)).toMatchObject({ status: "failed", code });
  return outcome.result.status === "failed" ? outcome.result.error : "";
}

/** Every request the host got is one of the shapes the executor promises, with fields of the right types. */
function expectWellFormed(requests: SandboxRequest[]): void {
  for (const request of requests) {
    switch (request.type) {
      case "call":
        expect(Object.keys(request).sort()).toEqual(["args", "connector", "method", "seq", "type"]);
        expect(Number.isSafeInteger(request.seq)).toBe(true);
        if (request.args !== "") valueCodec.decode(request.args);
        break;
      case "step":
        expect(typeof request.name).toBe("string");
        expect((request.value === undefined) !== (request.error === undefined)).toBe(true);
        break;
      case "service":
      case "invalid":
        break;
      default:
        throw new Error(`unknown request ${JSON.stringify(request)}`);
    }
  }
}

/**
 * Installed before the program: follows `value.constructor.constructor` to a Function and asks it
 * for the host. Contained means it found the sandbox's own Function and global and nothing else.
 */
const PROBE = `
function probe(value) {
  const ctor = value === null || value === undefined ? undefined : value.constructor;
  if (ctor === undefined) return { constructor: "none", nullPrototype: Object.getPrototypeOf(value) === null };
  const F = ctor.constructor;
  let escape;
  try { escape = typeof F("return process")(); } catch (error) { escape = error.name; }
  return {
    sameFunction: F === Function,
    sameGlobal: F("return this")() === globalThis,
    process: F("return typeof process")(),
    require: F("return typeof require")(),
    buffer: F("return typeof Buffer")(),
    escape,
  };
}
`;
const CONTAINED = {
  sameFunction: true,
  sameGlobal: true,
  process: "undefined",
  require: "undefined",
  buffer: "undefined",
  escape: "ReferenceError",
};
const NO_CONSTRUCTOR = { constructor: "none", nullPrototype: true };

describe("constructor chains on every value that crosses the bridge (R-SB-4)", () => {
  it("R-SB-4: constructor chain on a connector result cannot reach process", async () => {
    const outcome = await run(
      `${PROBE}\nasync () => { const r = await github.get({ list: [{ a: 1 }] }); return [probe(r), probe(r.args), probe(r.args.list), probe(r.args.list[0]), probe(r.seq)]; }`,
    );
    expect(returned(outcome)).toEqual([CONTAINED, CONTAINED, CONTAINED, CONTAINED, CONTAINED]);
  });

  it("R-SB-4: constructor chains on bigint and Uint8Array results stay in the sandbox", async () => {
    const outcome = await run(
      `${PROBE}\nasync () => { const r = await github.get({}); return [probe(r.big), probe(r.bytes), probe(r.bytes.buffer), r.bytes instanceof Uint8Array]; }`,
      {
        answer: () => ({ kind: "value", value: encode({ big: 10n, bytes: new Uint8Array([1, 2]) }) }),
      },
    );
    expect(returned(outcome)).toEqual([CONTAINED, CONTAINED, CONTAINED, true]);
  });

  it("R-SB-4: constructor chain on an error from a rejected call cannot reach process", async () => {
    const outcome = await run(
      `${PROBE}\nasync () => { try { await github.get({}); } catch (error) { return [probe(error), error instanceof Error, Object.getPrototypeOf(error) === Error.prototype, Object.keys(error)]; } }`,
      {
        answer: () => ({ kind: "error", message: "denied" }),
      },
    );
    expect(returned(outcome)).toEqual([CONTAINED, true, true, []]);
  });

  it("R-SB-4: an error the host's onRequest throws crosses as its message only", async () => {
    const outcome = await run(
      `${PROBE}\nasync () => { try { await github.get({}); } catch (error) { return { probe: probe(error), message: error.message, keys: Object.getOwnPropertyNames(error).sort(), hostFrames: /isolated-vm|node:|\\/work\\//.test(error.stack) }; } }`,
      {
        answer: () => {
          const error = new Error("host failure") as Error & { secret?: unknown };
          error.secret = { token: "do-not-leak" };
          throw error;
        },
      },
    );
    expect(returned(outcome)).toEqual({
      probe: CONTAINED,
      message: "host failure",
      keys: ["message", "stack"],
      hostFrames: false,
    });
  });

  it("R-SB-4: constructor chain on a codemode.step result cannot reach process", async () => {
    const outcome = await run(
      `${PROBE}\nasync () => { const v = await codemode.step('s', () => ({ nested: [1] })); return [probe(v), probe(v.nested), probe(codemode.step('t', async () => 1))]; }`,
    );
    expect(returned(outcome)).toEqual([CONTAINED, CONTAINED, CONTAINED]);
  });

  it("R-SB-4: the connector global object has no constructor, and its methods lead only to the sandbox", async () => {
    const outcome = await run(
      `${PROBE}\nasync () => [probe(github), probe(github.get), probe(github.get.call), probe(github.get({}))]`,
    );
    expect(returned(outcome)).toEqual([NO_CONSTRUCTOR, CONTAINED, CONTAINED, CONTAINED]);
  });

  it("R-SB-4: codemode and codemode.step (an async function) lead only to the sandbox", async () => {
    const outcome = await run(
      `${PROBE}\nasync () => [probe(codemode), probe(codemode.step), codemode.step.constructor.name]`,
    );
    expect(returned(outcome)).toEqual([NO_CONSTRUCTOR, CONTAINED, "AsyncFunction"]);
  });

  it("R-SB-4: console and console.log lead only to the sandbox", async () => {
    const outcome = await run(`${PROBE}\nasync () => [probe(console), probe(console.log), probe(console.error)]`);
    expect(returned(outcome)).toEqual([NO_CONSTRUCTOR, CONTAINED, CONTAINED]);
  });

  it("R-SB-4: crypto and its functions lead only to the sandbox", async () => {
    const outcome = await run(
      `${PROBE}\nasync () => [probe(crypto), probe(crypto.randomUUID), probe(crypto.getRandomValues), probe(crypto.randomUUID()), probe(crypto.getRandomValues(new Uint8Array(2)))]`,
    );
    expect(returned(outcome)).toEqual([NO_CONSTRUCTOR, CONTAINED, CONTAINED, CONTAINED, CONTAINED]);
  });

  it("R-SB-4: the replay-stable Date, its instances and Date.now lead only to the sandbox", async () => {
    const outcome = await run(
      `${PROBE}\nasync () => [probe(Date), probe(new Date()), probe(Date.now), probe(Date.prototype), probe(Math.random)]`,
    );
    expect(returned(outcome)).toEqual([CONTAINED, CONTAINED, CONTAINED, CONTAINED, CONTAINED]);
  });

  it("R-SB-4: timer functions and timer ids lead only to the sandbox", async () => {
    const outcome = await run(
      `${PROBE}\nasync () => [probe(setTimeout), probe(setTimeout(() => {}, 0)), probe(clearTimeout), probe(queueMicrotask), probe(setInterval)]`,
    );
    expect(returned(outcome)).toEqual([CONTAINED, CONTAINED, CONTAINED, CONTAINED, CONTAINED]);
  });

  it("R-SB-4: values replayed from the log lead only to the sandbox", async () => {
    const replay: ReplayEntry[] = [
      {
        kind: "call",
        seq: 0,
        connector: "github",
        method: "get",
        canonicalArgs: "{}",
        outcome: "value",
        text: encode({ replayed: [1n] }),
      },
      {
        kind: "call",
        seq: 1,
        connector: "github",
        method: "get",
        canonicalArgs: "{}",
        outcome: "error",
        text: "replayed error",
      },
    ];
    const outcome = await run(
      `${PROBE}\nasync () => { const v = await github.get({}); let e; try { await github.get({}); } catch (error) { e = error; } return [probe(v), probe(v.replayed[0]), probe(e)]; }`,
      { replay },
    );
    expect(returned(outcome)).toEqual([CONTAINED, CONTAINED, CONTAINED]);
    expect(outcome.requests).toEqual([]);
  });

  it("R-SB-4: bridge functions are strict: caller and arguments cannot be read to climb into the prelude", async () => {
    const outcome = await run(`async () => {
      const names = [];
      for (const fn of [github.get, codemode.step, console.log, crypto.randomUUID, setTimeout, Date, Date.now, Math.random]) {
        for (const key of ['caller', 'arguments']) {
          try { const value = fn[key]; names.push(value === undefined || value === null ? 'empty' : 'LEAK'); } catch (error) { names.push(error.name); }
        }
      }
      return [...new Set(names)];
    }`);
    expect((returned(outcome) as string[]).filter((name) => name === "LEAK")).toEqual([]);
  });

  it("R-SB-4: Error.prepareStackTrace frames expose no function or receiver of the prelude", async () => {
    const outcome = await run(`async () => {
      const seen = [];
      Error.prepareStackTrace = (error, frames) => frames.map((frame) => ({ file: frame.getFileName(), fn: typeof frame.getFunction(), self: typeof frame.getThis() }));
      const capture = () => seen.push(...new Error('probe').stack);
      await github.get({ get trap() { capture(); return 1; } });
      console.log({ toString() { capture(); return 'x'; }, get field() { capture(); return 1; } });
      await codemode.step('s', () => { capture(); return 1; });
      return seen.filter((frame) => frame.file !== 'codemode.js');
    }`);
    const frames = returned(outcome) as Array<{ file: string | null; fn: string; self: string }>;
    expect(frames.length).toBeGreaterThan(0);
    for (const frame of frames) expect(frame).toMatchObject({ fn: "undefined", self: "undefined" });
  });
});

describe("globals (R-SB-1)", () => {
  const ECMASCRIPT = new Set(
    "Object Function Array Number parseFloat parseInt Infinity NaN undefined Boolean String Symbol Date Promise RegExp Error AggregateError EvalError RangeError ReferenceError SyntaxError TypeError URIError globalThis JSON Math Intl ArrayBuffer SharedArrayBuffer Atomics Uint8Array Int8Array Uint16Array Int16Array Uint32Array Int32Array BigUint64Array BigInt64Array Uint8ClampedArray Float16Array Float32Array Float64Array DataView Map BigInt Set Iterator WeakMap WeakSet Proxy Reflect FinalizationRegistry WeakRef decodeURI decodeURIComponent encodeURI encodeURIComponent escape unescape eval isFinite isNaN SuppressedError DisposableStack AsyncDisposableStack Temporal".split(
      " ",
    ),
  );
  const CODEMODE = new Set([
    "github",
    "codemode",
    "console",
    "crypto",
    "setTimeout",
    "setInterval",
    "clearTimeout",
    "clearInterval",
    "queueMicrotask",
  ]);

  it("R-SB-1: every global is an ECMAScript built-in or a Code Mode global", async () => {
    const outcome = await run(
      "async () => ({ names: Object.getOwnPropertyNames(globalThis), symbols: Object.getOwnPropertySymbols(globalThis).map(String), proto: Object.getOwnPropertyNames(Object.getPrototypeOf(globalThis)) })",
    );
    const value = returned(outcome) as { names: string[]; symbols: string[]; proto: string[] };
    expect(value.names.filter((name) => !ECMASCRIPT.has(name) && !CODEMODE.has(name))).toEqual([]);
    for (const name of CODEMODE) expect(value.names).toContain(name);
    expect(value.symbols).toEqual([]);
    expect(value.proto).toEqual(["constructor"]);
  });

  it("R-SB-1: walking everything reachable from globalThis finds no host object", async () => {
    const outcome = await run(`async () => {
      const forbidden = new Set(['process', 'require', 'module', 'Buffer', '__dirname', '__filename', 'setImmediate', 'fetch', 'WebAssembly', 'applySync', 'applyIgnored', 'derefInto', 'copySync', 'copyInto', '_ivm', '__codemode_start']);
      const found = [];
      const seen = new Set();
      const queue = [globalThis];
      let foreignFunctions = 0;
      while (queue.length > 0 && seen.size < 50000) {
        const value = queue.shift();
        if ((typeof value !== 'object' && typeof value !== 'function') || value === null || seen.has(value)) continue;
        seen.add(value);
        if (typeof value === 'function' && !(value instanceof Function) && value !== Function.prototype) foreignFunctions++;
        const proto = Object.getPrototypeOf(value);
        if (proto) queue.push(proto);
        for (const key of Reflect.ownKeys(value)) {
          if (typeof key === 'string' && forbidden.has(key)) found.push(key);
          const descriptor = Reflect.getOwnPropertyDescriptor(value, key);
          for (const next of [descriptor.value, descriptor.get, descriptor.set]) if (next) queue.push(next);
        }
      }
      return { found, visited: seen.size, foreignFunctions };
    }`);
    const value = returned(outcome) as { found: string[]; visited: number; foreignFunctions: number };
    expect(value.found).toEqual([]);
    expect(value.foreignFunctions).toBe(0);
    expect(value.visited).toBeGreaterThan(500);
  });

  it("R-SB-1: process, require, module, Buffer and other host names are undefined", async () => {
    const names = [
      "process",
      "require",
      "module",
      "exports",
      "Buffer",
      "global",
      "__dirname",
      "__filename",
      "setImmediate",
      "fetch",
      "WebAssembly",
      "navigator",
      "XMLHttpRequest",
      "Deno",
      "Bun",
      "_ivm",
    ];
    const outcome = await run(`async () => [${names.map((name) => `typeof ${name}`).join(", ")}]`);
    expect(returned(outcome)).toEqual(names.map(() => "undefined"));
  });

  it("R-SB-1: dynamic import() of a Node module is refused inside the sandbox", async () => {
    const outcome = await run(
      "async () => { const attempts = []; for (const name of ['node:fs', 'fs', 'child_process', 'data:text/javascript,export default 1']) { try { await import(name); attempts.push('imported ' + name); } catch (error) { attempts.push('refused'); } } return attempts; }",
    );
    expect(returned(outcome)).toEqual(["refused", "refused", "refused", "refused"]);
  });

  it("R-SB-1: an uncaught import() fails the pass with SANDBOX_ERROR", async () => {
    failed(
      await run("async () => { const fs = await import('node:fs'); return fs.readFileSync('/etc/passwd', 'utf8'); }"),
      "SANDBOX_ERROR",
    );
  });

  it("R-SB-1: import() from eval'd and Function code is refused too", async () => {
    const outcome = await run(
      "async () => { const out = []; for (const load of [() => eval(\"import('node:fs')\"), () => Function(\"return import('node:fs')\")()]) { try { await load(); out.push('imported'); } catch { out.push('refused'); } } return out; }",
    );
    expect(returned(outcome)).toEqual(["refused", "refused"]);
  });

  it("R-SB-1: a static import is a SYNTAX_ERROR", async () => {
    const error = failed(await run("import { execSync } from 'node:child_process';\nexecSync('id')"), "SYNTAX_ERROR");
    expect(error).toContain("(line 1, column 1)");
  });

  it("R-SB-1: require(...) is a ReferenceError, so the pass fails with SANDBOX_ERROR", async () => {
    const error = failed(await run("async () => require('child_process').execSync('id').toString()"), "SANDBOX_ERROR");
    expect(error).toContain("require is not defined");
  });

  it("R-SB-1: eval and Function run inside the sandbox only", async () => {
    const outcome = await run(
      "async () => [eval('typeof process'), (0, eval)('this') === globalThis, new Function('return typeof require')(), Function('return this')() === globalThis, eval('Function')('return 6 * 7')()]",
    );
    expect(returned(outcome)).toEqual(["undefined", true, "undefined", true, 42]);
  });

  it("R-SB-1: WebAssembly is absent and cannot be found", async () => {
    const outcome = await run(
      "async () => [typeof WebAssembly, 'WebAssembly' in globalThis, Object.getOwnPropertyNames(globalThis).includes('WebAssembly'), typeof Function('return typeof WebAssembly')()]",
    );
    expect(returned(outcome)).toEqual(["undefined", false, false, "string"]);
  });

  it("R-SB-1: no global exposes a way to submit requests: the Code Mode objects hold only their documented functions", async () => {
    // A function's own keys may be length, name and a prototype object holding only its constructor.
    const outcome = await run(`async () => {
      const own = (fn) => {
        const keys = Reflect.ownKeys(fn).map(String).filter((key) => key !== 'prototype').sort().join(',');
        const prototype = Object.hasOwn(fn, 'prototype') ? Reflect.ownKeys(fn.prototype).map(String).join(',') : 'constructor';
        return keys + '|' + prototype;
      };
      const describe = (object) => Reflect.ownKeys(object).map((key) => [String(key), typeof object[key], typeof object[key] === 'function' ? own(object[key]) : '']);
      return {
        github: describe(github), codemode: describe(codemode), console: describe(console), crypto: describe(crypto),
        timers: [setTimeout, setInterval, clearTimeout, clearInterval, queueMicrotask, Date.now, Math.random].map(own),
        start: typeof __codemode_start, frozen: [github, codemode, console, crypto].map(Object.isFrozen),
      };
    }`);
    expect(returned(outcome)).toEqual({
      github: [
        ["get", "function", "length,name|constructor"],
        ["create_issue", "function", "length,name|constructor"],
      ],
      codemode: [["step", "function", "length,name|constructor"]],
      console: ["log", "info", "debug", "warn", "error"].map((name) => [name, "function", "length,name|constructor"]),
      crypto: [
        ["getRandomValues", "function", "length,name|constructor"],
        ["randomUUID", "function", "length,name|constructor"],
      ],
      timers: Array(7).fill("length,name|constructor"),
      start: "undefined",
      frozen: [true, true, true, true],
    });
  });

  it("R-SB-1: overwriting the Code Mode globals does not reroute calls", async () => {
    const outcome = await run(`async () => {
      const attempts = [];
      for (const attempt of [
        () => { github.get = () => 'fake'; },
        () => { globalThis.github = { get: () => 'fake' }; },
        () => { delete globalThis.github; },
        () => { Object.defineProperty(globalThis, 'github', { value: {} }); },
        () => { codemode.step = () => 'fake'; },
      ]) { try { attempt(); attempts.push('no error'); } catch (error) { attempts.push(error.name); } }
      const result = await github.get({ real: true });
      return { attempts, seq: result.seq, real: result.args.real };
    }`);
    expect(returned(outcome)).toMatchObject({ seq: 0, real: true });
    expect(outcome.requests).toEqual([
      { type: "call", seq: 0, connector: "github", method: "get", args: '{"real":true}' },
    ]);
  });
});

describe("poisoned prototypes and built-ins before calls and returns", () => {
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
    expect(returned(outcome)).toEqual({ list: 3, result: [4, 5] });
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
    expect(returned(outcome)).toEqual({ hijacked: { seq: 0, s: 2 } });
  });

  it("R-SB-4: a throwing Promise.prototype.constructor leaves requests well-formed and the pass coded", async () => {
    const outcome = await run(`async () => {
      Object.defineProperty(Promise.prototype, 'constructor', { get() { throw new Error('constructor trap'); } });
      const r = await github.get({ n: 1 });
      return r;
    }`);
    expect(outcome.requests).toEqual([{ type: "call", seq: 0, connector: "github", method: "get", args: '{"n":1}' }]);
    expect(failed(outcome, "SANDBOX_ERROR")).toContain("constructor trap");
  });

  it("R-SB-4: an overwritten JSON.stringify and JSON.parse do not change the wire", async () => {
    const outcome = await run(`async () => {
      JSON.stringify = () => '{"type":"call","seq":7,"connector":"github","method":"forged","args":""}';
      JSON.parse = () => ({ forged: true });
      const r = await github.get({ n: 1 });
      return { seq: r.seq, n: r.args.n };
    }`);
    expect(outcome.requests).toEqual([{ type: "call", seq: 0, connector: "github", method: "get", args: '{"n":1}' }]);
    expect(returned(outcome)).toEqual({ seq: 0, n: 1 });
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
    expect(returned(outcome)).toEqual({ seq: 0, keep: "me" });
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
    expect(returned(outcome)).toEqual({ big: 7n, bytes: new Uint8Array([1, 2, 3]) });
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

  it("R-SB-2: a poisoned Error.prepareStackTrace does not stop a throw from being reported", async () => {
    const outcome = await run(
      "async () => { Error.prepareStackTrace = () => { throw new Error('stack trap'); }; throw new Error('real failure'); }",
    );
    expect(failed(outcome, "SANDBOX_ERROR")).toContain("real failure");
  });

  it("R-SB-2: a throwing Object.prototype.toJSON does not stop a throw from being reported", async () => {
    const outcome = await run(
      "async () => { Object.prototype.toJSON = () => { throw new Error('toJSON trap'); }; throw new Error('real failure'); }",
    );
    expect(failed(outcome, "SANDBOX_ERROR")).toContain("Error: real failure");
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
    expect(returned(outcome)).toEqual({ bytes: 2, message: [true, "host said no"] });
  });
});

describe("returned values (R-SB-4, R-DV-1)", () => {
  it("R-DV-1: a returned object with a throwing getter is NOT_SERIALIZABLE", async () => {
    expect(
      failed(
        await run("async () => ({ ok: 1, get broken() { throw new Error('getter exploded'); } })"),
        "NOT_SERIALIZABLE",
      ),
    ).toContain("getter exploded");
  });

  it("R-DV-1: a getter that throws a hostile Proxy is still NOT_SERIALIZABLE", async () => {
    const outcome = await run(
      "async () => { const trap = new Proxy({}, { getPrototypeOf() { throw new Error('trap'); }, get() { throw new Error('trap'); } }); return { get x() { throw trap; } }; }",
    );
    failed(outcome, "NOT_SERIALIZABLE");
  });

  it("R-DV-1: a Proxy whose ownKeys trap throws is NOT_SERIALIZABLE", async () => {
    expect(
      failed(
        await run("async () => new Proxy({}, { ownKeys() { throw new Error('ownKeys trap'); } })"),
        "NOT_SERIALIZABLE",
      ),
    ).toContain("ownKeys trap");
  });

  it("R-DV-1: a Proxy of an array whose get trap throws is NOT_SERIALIZABLE", async () => {
    failed(
      await run("async () => ({ list: new Proxy([1, 2], { get() { throw new Error('get trap'); } }) })"),
      "NOT_SERIALIZABLE",
    );
  });

  it("R-SB-4: a lying Proxy crosses only as the plain data it reports", async () => {
    const outcome = await run(
      "async () => new Proxy({}, { ownKeys: () => ['a', 'b'], getOwnPropertyDescriptor: () => ({ value: 1, enumerable: true, configurable: true }), get: (target, key) => key === 'a' ? 1 : 'two' })",
    );
    expect(outcome.result).toMatchObject({ status: "returned", value: '{"a":1,"b":"two"}' });
  });

  it("R-DV-1: a returned symbol is NOT_SERIALIZABLE; symbol keys are dropped", async () => {
    failed(await run("async () => Symbol('s')"), "NOT_SERIALIZABLE");
    expect((await run("async () => ({ [Symbol('hidden')]: 1, shown: 2 })")).result).toMatchObject({
      status: "returned",
      value: '{"shown":2}',
    });
  });

  it("R-DV-1: a returned function, or one inside the result, is NOT_SERIALIZABLE naming where", async () => {
    failed(await run("async () => function escape() { return globalThis; }"), "NOT_SERIALIZABLE");
    expect(failed(await run("async () => ({ data: [1, { callback: () => 1 }] })"), "NOT_SERIALIZABLE")).toContain(
      "data[1].callback",
    );
  });

  it("R-DV-1: a returned cycle is NOT_SERIALIZABLE", async () => {
    expect(
      failed(await run("async () => { const a = { b: {} }; a.b.a = a; return a; }"), "NOT_SERIALIZABLE"),
    ).toContain("circular reference at b.a");
  });

  it("R-DV-1: a 100k-deep array is NOT_SERIALIZABLE, not a stack overflow", async () => {
    expect(
      failed(
        await run("async () => { let a = []; for (let i = 0; i < 100000; i++) a = [a]; return a; }"),
        "NOT_SERIALIZABLE",
      ),
    ).toContain("nested more than 512 levels deep");
  });

  it("R-DV-1: returned Map, Set and Promise are NOT_SERIALIZABLE", async () => {
    for (const expression of ["new Map([[1, 2]])", "new Set([1])", "({ pending: new Promise(() => {}) })"]) {
      failed(await run(`async () => ${expression}`), "NOT_SERIALIZABLE");
    }
  });

  it("R-RP-7: a getter on the returned object that calls a connector is delivered before the pass ends", async () => {
    const outcome = await run("async () => ({ get x() { github.create_issue({ fromGetter: true }); return 1; } })");
    expect(returned(outcome)).toEqual({ x: 1 });
    expect(outcome.requests).toEqual([
      { type: "call", seq: 0, connector: "github", method: "create_issue", args: '{"fromGetter":true}' },
    ]);
    await sleep(50);
    expect(outcome.lateRequests()).toBe(0);
  });

  it("R-SB-3: a getter on the returned object that loops forever is a TIMEOUT", async () => {
    failed(await run("async () => ({ get x() { for (;;) {} } })", { timeoutMs: 500 }), "TIMEOUT");
  });

  it("R-DV-1: a getter on the returned object that recurses without end is coded, not a crash", async () => {
    const outcome = await run(
      "async () => { const deep = (n) => deep(n + 1) + 1; return { get x() { return deep(0); } }; }",
    );
    expect(failed(outcome, "NOT_SERIALIZABLE")).toContain("Maximum call stack size exceeded");
  });
});

describe("connector arguments (R-SB-4, R-DV-1)", () => {
  it("R-SB-4: a connector called with more than one argument rejects in the sandbox and sends nothing", async () => {
    const outcome = await run(
      "async () => { try { await github.get({ a: 1 }, { smuggled: true }); } catch (error) { return error.name + ': ' + error.message; } }",
    );
    expect(returned(outcome)).toBe("TypeError: github.get takes one argument (an object)");
    expect(outcome.requests).toEqual([]);
  });

  it("R-DV-1: a connector called with a function argument sends an invalid request; the host halts the pass", async () => {
    const outcome = await run(
      "async () => { await github.create_issue({ title: 't', onDone: () => process.exit(1) }); return 'went on'; }",
    );
    expect(outcome.result.status).toBe("halted");
    expect(outcome.requests).toEqual([
      { type: "invalid", seq: 0, message: expect.stringContaining("a function at onDone") },
    ]);
  });

  it("R-DV-1: a connector called with a symbol argument sends an invalid request; the host halts the pass", async () => {
    const outcome = await run("async () => { await github.get(Symbol('x')); return 'went on'; }");
    expect(outcome.result.status).toBe("halted");
    expect(outcome.requests).toEqual([
      { type: "invalid", seq: 0, message: expect.stringContaining("a symbol at the top level") },
    ]);
  });

  it("R-DV-1: a cyclic argument sends an invalid request; the host halts the pass", async () => {
    const outcome = await run("async () => { const a = {}; a.self = a; await github.get(a); }");
    expect(outcome.result.status).toBe("halted");
    expect(outcome.requests).toEqual([
      { type: "invalid", seq: 0, message: expect.stringContaining("circular reference at self") },
    ]);
  });

  it("R-DV-1: a 100k-deep argument sends an invalid request; the host halts the pass", async () => {
    const outcome = await run(
      "async () => { let a = {}; for (let i = 0; i < 100000; i++) a = { a }; await github.get(a); }",
    );
    expect(outcome.result.status).toBe("halted");
    expect(outcome.requests).toEqual([
      { type: "invalid", seq: 0, message: expect.stringContaining("nested more than 512 levels deep") },
    ]);
  });

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
    expect(returned(outcome)).toBe(0);
    expectWellFormed(outcome.requests);
    expect(outcome.requests).toEqual([
      { type: "call", seq: 1, connector: "github", method: "create_issue", args: '{"nested":true}' },
      { type: "call", seq: 0, connector: "github", method: "get", args: '{"inner":1}' },
    ]);
  });

  it("R-DV-1: a step whose fn returns a function sends an invalid request; the host halts the pass", async () => {
    const outcome = await run("async () => { await codemode.step('leak', () => () => globalThis); return 'went on'; }");
    expect(outcome.result.status).toBe("halted");
    expect(outcome.requests).toEqual([
      { type: "invalid", seq: 0, message: expect.stringContaining("a function at the top level") },
    ]);
  });
});

describe("huge outputs", () => {
  it("R-DV-2: a 50 MB string result comes back whole", async () => {
    const outcome = await run("async () => 'x'.repeat(50 * 1024 * 1024)", { timeoutMs: 10_000 });
    expect(outcome.result.status).toBe("returned");
    const value = outcome.value as string;
    expect(value.length).toBe(50 * 1024 * 1024);
    expect(value.startsWith("xxxx") && value.endsWith("xxxx")).toBe(true);
  });

  it("R-SB-1: console.log flooding is capped with a note", async () => {
    const outcome = await run("async () => { for (let i = 0; i < 5000; i++) console.log('line', i); return 'done'; }", {
      timeoutMs: 20_000,
    });
    expect(returned(outcome)).toBe("done");
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
    expect(returned(outcome)).toBe("survived");
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
    expect(returned(outcome)).toBe(520_093_696);
    expect(outcome.result.logs).toEqual(["big:… [520093697 more characters]", "[error] … [520093696 more characters]"]);
  });

  it("R-SB-3: console output of a pass is bounded in characters as well as lines", async () => {
    const outcome = await run(
      "async () => { const line = 'z'.repeat(5000); for (let i = 0; i < 900; i++) console.log(line); return 'done'; }",
      { timeoutMs: 10_000 },
    );
    expect(returned(outcome)).toBe("done");
    const total = outcome.result.logs.reduce((sum, line) => sum + line.length, 0);
    expect(total).toBeLessThanOrEqual(1_000_000 + 100);
    expect(outcome.result.logs.at(-1)).toBe("[logs truncated: more than 1000000 characters]");
  });

  it("R-SB-3: a thrown message is cut to 10,000 characters, with a note of what was left out", async () => {
    const error = failed(await run("async () => { throw new Error('m'.repeat(50_000)); }"), "SANDBOX_ERROR");
    expect(error.length).toBeLessThan(10_100);
    expect(error).toContain("… [40000 more characters]");
  });

  it("R-SB-3: a message too long to read is described by its length", async () => {
    const error = failed(
      await run(`async () => { ${HUGE} throw new RangeError(s); }`, { memoryMb: 16 }),
      "SANDBOX_ERROR",
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

describe("limits (R-SB-3)", () => {
  it("R-SB-3: deep recursion is a SANDBOX_ERROR, not a host stack overflow", async () => {
    expect(
      failed(await run("async () => { const down = (n) => down(n + 1) + 1; return down(0); }"), "SANDBOX_ERROR"),
    ).toContain("Maximum call stack size exceeded");
  });

  it("R-SB-3: a synchronous infinite loop is a TIMEOUT", async () => {
    failed(await run("while (true) {}", { timeoutMs: 500 }), "TIMEOUT");
  });

  it("R-SB-3: a loop after an await is a TIMEOUT", async () => {
    failed(await run("async () => { await github.get({}); for (;;) {} }", { timeoutMs: 500 }), "TIMEOUT");
  });

  it("R-SB-3: a promise that never settles is a TIMEOUT", async () => {
    failed(await run("async () => { await new Promise(() => {}); }", { timeoutMs: 500 }), "TIMEOUT");
  });

  it("R-SB-3: a microtask flood is a TIMEOUT", async () => {
    failed(
      await run(
        "async () => { const spin = () => Promise.resolve().then(spin); spin(); await new Promise(() => {}); }",
        { timeoutMs: 500 },
      ),
      "TIMEOUT",
    );
  });

  it("R-SB-3: a loop inside a timer callback is a TIMEOUT", async () => {
    failed(
      await run("async () => { setTimeout(() => { for (;;) {} }, 5); await new Promise(() => {}); }", {
        timeoutMs: 500,
      }),
      "TIMEOUT",
    );
  });

  it("R-SB-3: a setInterval storm with a 0 ms delay is a TIMEOUT", async () => {
    failed(
      await run(
        "async () => { for (let i = 0; i < 100; i++) setInterval(() => {}, 0); await new Promise(() => {}); }",
        { timeoutMs: 500 },
      ),
      "TIMEOUT",
    );
  });

  it("R-SB-3: a host that never answers is a TIMEOUT", async () => {
    failed(
      await run("async () => github.get({})", { timeoutMs: 500, answer: () => new Promise<HostReply>(() => {}) }),
      "TIMEOUT",
    );
  });

  it("R-SB-3: a memory bomb is a MEMORY_LIMIT", async () => {
    failed(
      await run("async () => { const keep = []; for (;;) keep.push(new Array(100000).fill(keep.length)); }", {
        memoryMb: 32,
        timeoutMs: 5_000,
      }),
      "MEMORY_LIMIT",
    );
  });

  it("R-SB-3: a memory bomb after an await is a MEMORY_LIMIT", async () => {
    failed(
      await run(
        "async () => { await github.get({}); const keep = []; for (;;) keep.push(new Array(100000).fill(keep.length)); }",
        { memoryMb: 32, timeoutMs: 5_000 },
      ),
      "MEMORY_LIMIT",
    );
  });

  it("R-SB-3: a memory bomb inside a timer callback is a MEMORY_LIMIT", async () => {
    failed(
      await run(
        "async () => { setTimeout(() => { const keep = []; for (;;) keep.push(new Array(100000).fill(1)); }, 1); await new Promise(() => {}); }",
        { memoryMb: 32, timeoutMs: 5_000 },
      ),
      "MEMORY_LIMIT",
    );
  });

  it("R-SB-3: a 2 GB ArrayBuffer fails inside the sandbox", async () => {
    const outcome = await run("async () => new ArrayBuffer(2 ** 31).byteLength", { memoryMb: 32 });
    expect(failed(outcome, "SANDBOX_ERROR")).toContain("RangeError");
  });

  it("R-SB-3: Atomics.wait on a SharedArrayBuffer ends", async () => {
    const outcome = await run("async () => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0)", {
      timeoutMs: 500,
    });
    expect(outcome.result.status).toBe("failed");
    if (outcome.result.status === "failed") expect(["TIMEOUT", "SANDBOX_ERROR"]).toContain(outcome.result.code);
  });
});

describe("memory the heap limit does not count (issue 17.2)", () => {
  it("R-SB-3: a growable SharedArrayBuffer is refused inside the sandbox", async () => {
    const error = failed(
      await run(
        "async () => { const b = new SharedArrayBuffer(16, { maxByteLength: 2 ** 30 }); b.grow(2 ** 25); return b.byteLength; }",
        { memoryMb: 16 },
      ),
      "SANDBOX_ERROR",
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
    expect(returned(outcome)).toEqual([
      "RangeError",
      "RangeError",
      "RangeError",
      "RangeError",
      "RangeError",
      "RangeError",
    ]);
  });

  it("R-SB-3: Intl is guarded on its first read, however the program poisoned prototypes before", async () => {
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
    expect(returned(outcome)).toEqual([1_000, "RangeError", "function"]);
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
    expect(returned(outcome)).toEqual([3, 0, "Tue Jan 02 2024 03:04:05 GMT+0000 (Coordinated Universal Time)", true]);
  });

  it("R-SB-6: Intl reads the execution's clock in UTC even after the program poisoned prototypes", async () => {
    const outcome = await run(`async () => {
      Object.defineProperty(Object.prototype, 'get', { value: () => 1, configurable: true, writable: true });
      Object.prototype.value = 'poisoned';
      Array.prototype[Symbol.iterator] = function* () {};
      return [new Intl.DateTimeFormat('en-US', { dateStyle: 'short', timeStyle: 'medium' }).format(), Intl.DateTimeFormat().resolvedOptions().timeZone];
    }`);
    expect(returned(outcome)).toEqual(["11/14/23, 10:13:20 PM", "UTC"]);
  });

  it("R-SB-3: more than 1,000 Intl objects in a pass fail inside the sandbox", async () => {
    const outcome = await run(
      "async () => { const kept = []; try { for (;;) kept.push(new Intl.DateTimeFormat('en', { timeZone: 'UTC' })); } catch (error) { return [kept.length, error.name]; } }",
      {
        memoryMb: 32,
      },
    );
    expect(returned(outcome)).toEqual([1_000, "RangeError"]);
  });
});

describe("unhandled rejections stay in the sandbox", () => {
  // isolated-vm fails the task in which a rejection goes unhandled: the first run of the program
  // fails the pass, a later one (code running on a host reply or timer) is dropped.
  it("R-SB-3: an unhandled rejection before the first await fails the pass with SANDBOX_ERROR", async () => {
    expect(
      failed(await run("async () => { Promise.reject(new Error('nobody listens')); return 1; }"), "SANDBOX_ERROR"),
    ).toContain("nobody listens");
  });

  it("R-SB-3: an unhandled rejection after an await does not reach the host process", async () => {
    const outcome = await run(
      "async () => { await github.get({}); Promise.reject(new Error('later')); await new Promise((r) => setTimeout(r, 10)); return 1; }",
    );
    expect(outcome.result).toMatchObject({ status: "returned", value: "1" });
  });

  it("R-SB-3: a rejected connector call left unawaited does not reach the host process", async () => {
    const outcome = await run(
      "async () => { github.get({}); await new Promise((r) => setTimeout(r, 20)); return 'done'; }",
      { answer: () => ({ kind: "error", message: "rejected later" }) },
    );
    expect(outcome.result).toMatchObject({ status: "returned", value: '"done"' });
  });

  it("R-SB-3: a timer callback that throws does not reach the host process", async () => {
    const outcome = await run(
      "async () => { setTimeout(() => { throw new Error('timer threw'); }, 0); setTimeout(() => Promise.reject(new Error('timer rejected')), 0); await new Promise((r) => setTimeout(r, 30)); return 1; }",
    );
    expect(outcome.result).toMatchObject({ status: "returned", value: "1" });
  });

  it("R-SB-3: thrown non-errors (symbol, null, a Proxy) are a SANDBOX_ERROR", async () => {
    for (const thrown of [
      "Symbol('s')",
      "null",
      "new Proxy({}, { getPrototypeOf() { throw 1; }, get() { throw 2; } })",
      "Object.create(Error.prototype, { message: { get() { throw 3; } } })",
    ]) {
      failed(await run(`async () => { throw ${thrown}; }`), "SANDBOX_ERROR");
    }
  });
});

describe("nothing runs after the pass", () => {
  it("R-SB-1: a setTimeout set to fire after the program returns never reaches the host", async () => {
    const outcome = await run(
      "async () => { setTimeout(() => github.create_issue({ late: true }), 30); return 'returned'; }",
    );
    expect(returned(outcome)).toBe("returned");
    await sleep(150);
    expect(outcome.requests).toEqual([]);
    expect(outcome.lateRequests()).toBe(0);
  });

  it("R-SB-1: a setInterval calling a connector stops with the pass", async () => {
    const outcome = await run(
      "async () => { setInterval(() => github.get({ tick: true }), 5); await new Promise((r) => setTimeout(r, 30)); return 'returned'; }",
    );
    expect(returned(outcome)).toBe("returned");
    const during = outcome.requests.length;
    await sleep(150);
    expect(outcome.requests.length).toBe(during);
    expect(outcome.lateRequests()).toBe(0);
  });

  it("R-RP-7: a continuation of an unawaited call cannot start a call after the pass", async () => {
    const outcome = await run(
      "async () => { github.get({ first: true }).then(() => github.create_issue({ second: true })); return 'returned'; }",
      {
        answer: async (request) => {
          await sleep(30);
          return echo(request);
        },
      },
    );
    expect(returned(outcome)).toBe("returned");
    await sleep(150);
    expect(outcome.lateRequests()).toBe(0);
    expect(outcome.requests[0]).toEqual({
      type: "call",
      seq: 0,
      connector: "github",
      method: "get",
      args: '{"first":true}',
    });
  });

  it("R-RP-6: after a halt, timers and continuations of the program reach the host no more", async () => {
    const outcome = await run(
      "async () => { setInterval(() => github.get({ tick: true }).catch(() => {}), 2); await github.create_issue({ needs: 'approval' }); return 'not reached'; }",
      {
        answer: (request) =>
          request.type === "call" && request.method === "create_issue" ? { kind: "halt" } : echo(request),
      },
    );
    expect(outcome.result.status).toBe("halted");
    const during = outcome.requests.length;
    await sleep(100);
    expect(outcome.requests.length).toBe(during);
    expect(outcome.lateRequests()).toBe(0);
  });
});

describe("the program cannot leave its function (R-SB-2)", () => {
  it("R-SB-2: code closing the wrapper function directly is a SYNTAX_ERROR", async () => {
    failed(await run('}); (() => "R1")(async () => {'), "SYNTAX_ERROR");
  });

  it("R-SB-2: module-only grammar cannot close the wrapper through an HTML-like comment", async () => {
    // Parsed as a module this is one template literal; as the script the executor compiles, `<!--`
    // would start a comment and the next line would close the function and forge the result text.
    const outcome = await run('export default 1;\nx = a <!--b[`\n}); (() => "Rnot wire text")(async () => {\n//`];');
    failed(outcome, "SYNTAX_ERROR");
  });

  it("R-SB-2: calling the start hook again or replacing it changes nothing", async () => {
    const outcome = await run(
      "async () => { const before = typeof __codemode_start; globalThis.__codemode_start = () => 'forged'; return before; }",
    );
    expect(outcome.result).toMatchObject({ status: "returned", value: '"undefined"' });
  });
});

describe("the host process", () => {
  it("R-SB-3: never saw an unhandledRejection while the whole corpus ran", () => {
    expect(unhandledRejection).not.toHaveBeenCalled();
  });
});
