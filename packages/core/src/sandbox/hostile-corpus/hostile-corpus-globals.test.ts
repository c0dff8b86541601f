/**
 * Hostile corpus (see hostile-corpus-fixtures.ts): programs that look for host objects among the
 * globals, or load host code through import, require or eval.
 */
import { describe, expect, it } from "vitest";
import { expectFailed, expectReturned, onQuickJs } from "../pass-fixtures.js";
import { hostileCorpus } from "./hostile-corpus-fixtures.js";

const { run } = hostileCorpus();

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
      "async () => ({ names: Object.getOwnPropertyNames(globalThis), symbols: Object.getOwnPropertySymbols(globalThis).map(String), proto: Object.getOwnPropertyNames(Object.getPrototypeOf(globalThis)), objectPrototype: Object.getPrototypeOf(globalThis) === Object.prototype })",
    );
    const value = expectReturned(outcome) as {
      names: string[];
      symbols: string[];
      proto: string[];
      objectPrototype: boolean;
    };
    expect(value.names.filter((name) => !ECMASCRIPT.has(name) && !CODEMODE.has(name))).toEqual([]);
    for (const name of CODEMODE) expect(value.names).toContain(name);
    expect(value.symbols).toEqual([]);
    // A V8 context's global inherits from an object of its own holding only `constructor`;
    // QuickJS's global inherits from Object.prototype itself.
    if (onQuickJs) expect(value.objectPrototype).toBe(true);
    else expect(value.proto).toEqual(["constructor"]);
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
    const value = expectReturned(outcome) as { found: string[]; visited: number; foreignFunctions: number };
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
    expect(expectReturned(outcome)).toEqual(names.map(() => "undefined"));
  });

  it("R-SB-1: WebAssembly is absent and cannot be found", async () => {
    const outcome = await run(
      "async () => [typeof WebAssembly, 'WebAssembly' in globalThis, Object.getOwnPropertyNames(globalThis).includes('WebAssembly'), typeof Function('return typeof WebAssembly')()]",
    );
    expect(expectReturned(outcome)).toEqual(["undefined", false, false, "string"]);
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
    expect(expectReturned(outcome)).toEqual({
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
    expect(expectReturned(outcome)).toMatchObject({ seq: 0, real: true });
    expect(outcome.requests).toEqual([
      { type: "call", seq: 0, connector: "github", method: "get", args: '{"real":true}' },
    ]);
  });
});

describe("imports, require and eval (R-SB-1)", () => {
  it("R-SB-1: dynamic import() of a Node module is refused inside the sandbox", async () => {
    const outcome = await run(
      "async () => { const attempts = []; for (const name of ['node:fs', 'fs', 'child_process', 'data:text/javascript,export default 1']) { try { await import(name); attempts.push('imported ' + name); } catch (error) { attempts.push('refused'); } } return attempts; }",
    );
    expect(expectReturned(outcome)).toEqual(["refused", "refused", "refused", "refused"]);
  });

  it("R-SB-1: an uncaught import() fails the pass with PROGRAM_ERROR", async () => {
    expectFailed(
      await run("async () => { const fs = await import('node:fs'); return fs.readFileSync('/etc/passwd', 'utf8'); }"),
      "PROGRAM_ERROR",
    );
  });

  it("R-SB-1: import() from eval'd and Function code is refused too", async () => {
    const outcome = await run(
      "async () => { const out = []; for (const load of [() => eval(\"import('node:fs')\"), () => Function(\"return import('node:fs')\")()]) { try { await load(); out.push('imported'); } catch { out.push('refused'); } } return out; }",
    );
    expect(expectReturned(outcome)).toEqual(["refused", "refused"]);
  });

  it("R-SB-1: a static import is a SYNTAX_ERROR", async () => {
    const error = expectFailed(
      await run("import { execSync } from 'node:child_process';\nexecSync('id')"),
      "SYNTAX_ERROR",
    );
    expect(error).toContain("(line 1, column 1)");
  });

  it("R-SB-1: require(...) is a ReferenceError, so the pass fails with PROGRAM_ERROR", async () => {
    const error = expectFailed(
      await run("async () => require('child_process').execSync('id').toString()"),
      "PROGRAM_ERROR",
    );
    expect(error).toContain("require is not defined");
  });

  it("R-SB-1: eval and Function run inside the sandbox only", async () => {
    const outcome = await run(
      "async () => [eval('typeof process'), (0, eval)('this') === globalThis, new Function('return typeof require')(), Function('return this')() === globalThis, eval('Function')('return 6 * 7')()]",
    );
    expect(expectReturned(outcome)).toEqual(["undefined", true, "undefined", true, 42]);
  });
});
