/**
 * Hostile corpus (see hostile-corpus-fixtures.ts): String built-ins whose search compares the
 * needle at every position of the text, in native code neither engine interrupts: V8's
 * `lastIndexOf`, and in quickjs-ng `indexOf`, `lastIndexOf`, `includes`, `split`, `replace` and
 * `replaceAll` with a string pattern. A 120,000 character text and a 60,001 character needle that
 * never matches took a second (V8) or minutes (QuickJS) per call, and V8 lost the termination
 * request inside it, so a loop of them outlived its deadline. The string guard
 * (install-string-guard.ts) runs such a search in JavaScript, in linear time (R-SB-8). Every
 * program runs on the executor `CODEMODE_EXECUTOR` names (isolated-vm or QuickJS); the answers
 * expected are the host's own built-ins'.
 */
import { createContext, runInContext, runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import { expectFailed, expectReturned, onQuickJs } from "../pass-fixtures.js";
import {
  createStringGuardTools,
  createTwoWaySearch,
  installStringReplaceGuard,
  installStringSearchGuard,
} from "../prelude/install-string-guard.js";
import { hostileCorpus } from "./hostile-corpus-fixtures.js";

const { run } = hostileCorpus();

/** Runs `body` (statements that return) with a 2 s limit unless set: the pass must return, whatever it computed. */
async function returned(body: string, timeoutMs = 2_000): Promise<unknown> {
  return expectReturned(await run(`async () => { ${body} }`, { timeoutMs }));
}
/** Evaluates an expression in a fresh realm of the host, whose built-ins give the answers expected. */
const inHost = (source: string): unknown => JSON.parse(runInNewContext(`JSON.stringify(${source})`));

/** The texts of the corpus: no match, the match at the very end, and the match at the very start. */
const TEXTS = `const needle = "a".repeat(60000) + "b";
  const never = "a".repeat(120000), atEnd = "a".repeat(119999) + "b", atStart = needle + "a".repeat(59999);`;
/** [method, call, answer]: each call is over the 120,000 character text and the 60,001 character needle. */
const LONG_SEARCHES: Array<[string, string, unknown]> = [
  ["indexOf", "[never.indexOf(needle), atEnd.indexOf(needle), atStart.indexOf(needle, 1)]", [-1, 59999, -1]],
  [
    "lastIndexOf",
    "[never.lastIndexOf(needle), atEnd.lastIndexOf(needle), atStart.lastIndexOf(needle)]",
    [-1, 59999, 0],
  ],
  ["includes", "[never.includes(needle), atEnd.includes(needle), atStart.includes(needle, 1)]", [false, true, false]],
  [
    "split",
    "[never.split(needle).length, atEnd.split(needle).map((part) => part.length), atStart.split(needle, 1)[0].length]",
    [1, [59999, 0], 0],
  ],
  [
    "replace",
    "[never.replace(needle, 'x') === never, atEnd.replace(needle, '[$&]').length, atStart.replace(needle, () => 'x').length]",
    [true, 120002, 60000],
  ],
  [
    "replaceAll",
    "[never.replaceAll(needle, 'x') === never, atEnd.replaceAll(needle, '$`').length, atStart.replaceAll(needle, '$$').length]",
    [true, 119998, 60000],
  ],
];

describe("string searches the built-ins run in native code for seconds (R-SB-8)", () => {
  for (const [method, call, answer] of LONG_SEARCHES) {
    it(`R-SB-8: ${method} over 120,000 characters and a 60,001 character needle answers as the built-in, within 2 s`, async () => {
      expect(await returned(`${TEXTS} return ${call};`)).toEqual(answer);
    });

    it(`R-SB-8: a loop of such ${method} calls ends TIMEOUT at a 2 s deadline instead of hanging`, async () => {
      const started = Date.now();
      const outcome = await run(`async () => { ${TEXTS} for (;;) never.${method}(needle); }`, { timeoutMs: 2_000 });
      expectFailed(outcome, "TIMEOUT");
      expect(Date.now() - started).toBeLessThan(4_000);
    });
  }
});

/**
 * Inputs for the comparisons below: `count` rounds of the six methods over random texts of up to
 * `size` characters (from a seed, so the host and the sandbox make the same), with positions,
 * limits and replacement templates of every kind; "FN" stands for a replacement function.
 */
const CASES = `(count, size, seed) => {
  let state = seed;
  const random = () => { state = (state + 0x6d2b79f5) | 0; let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t; return ((t ^ (t >>> 14)) >>> 0) / 4294967296; };
  const below = (most) => Math.floor(random() * most);
  const pick = (list) => list[below(list.length)];
  const text = (length, alphabet) => { let made = ""; while (made.length < length) made += pick(alphabet); return made; };
  const positions = [undefined, -1, 0, 1, 3, 1.5, -0.5, NaN, Infinity, -Infinity, 1e9, "2", null, true, 2 ** 32];
  const limits = [undefined, 0, 1, 2, -1, 2 ** 32 + 1, NaN, "3", 0.5];
  const templates = ["x", "$&", "$$", "$\`", "$'", "[$&|$\`|$']", "$1$0$<n>$", "$", "a$", "$$$&$", "FN"];
  const alphabets = [["a"], ["a", "b"], ["a", "$", "&", "'"], ["\\ud800", "\\udc00", "a"], ["ab", "a", "b"]];
  const cases = [];
  for (let round = 0; round < count; round++) {
    const alphabet = pick(alphabets);
    const haystack = text(below(size), alphabet);
    const from = below(haystack.length + 1);
    let needle = random() < 0.6 ? haystack.slice(from, from + below(size / 2)) : text(below(24), alphabet);
    if (random() < 0.2) needle = needle.repeat(2);
    for (const method of ["indexOf", "lastIndexOf", "includes"]) cases.push([method, haystack, needle, pick(positions)]);
    cases.push(["split", haystack, needle, pick(limits)], ["replace", haystack, needle, pick(templates)]);
    cases.push(["replaceAll", haystack, needle, pick(templates)]);
  }
  return cases;
}`;
/** What each case gives, in short text; `wrap` makes the receiver a String object (the guard's own path). */
const EVALUATE = `(cases, wrap) => cases.map(([method, receiver, ...args]) => {
  const digest = (text) => { if (text.length < 80) return text; let hash = 0;
    for (let index = 0; index < text.length; index++) hash = Math.imul(hash ^ text.charCodeAt(index), 16777619);
    return text.length + "#" + hash; };
  if (args[1] === "FN") args[1] = (...parts) => "<" + parts.join(",") + ">";
  try { return digest(JSON.stringify(String.prototype[method].apply(wrap ? new String(receiver) : receiver, args))); }
  catch (error) { return "throws " + error.name; }
})`;
const expected = (count: number, size: number, seed: number, wrap: boolean) =>
  inHost(`(${EVALUATE})((${CASES})(${count}, ${size}, ${seed}), ${wrap})`);
const inSandbox = (count: number, size: number, seed: number, wrap: boolean) =>
  returned(`return (${EVALUATE})((${CASES})(${count}, ${size}, ${seed}), ${wrap});`, 20_000);

/** A fresh realm of the host with the guard installed, leaving to the built-ins no search of more than `bound` comparisons. */
function guardedRealm(bound: number) {
  const context = createContext();
  const parts = [createTwoWaySearch, createStringGuardTools, installStringSearchGuard, installStringReplaceGuard];
  const [twoWay, tools, search, replace] = parts.map((part) => `(${part.toString()})`);
  runInContext(`{ const tools = ${tools}(${twoWay}(), ${bound}); ${search}(tools); ${replace}(tools); }`, context);
  return (source: string): unknown => JSON.parse(runInContext(`JSON.stringify(${source})`, context));
}

describe("the guarded methods answer as the built-ins (R-SB-8)", () => {
  for (const bound of [0, 300, 5_000]) {
    it(`R-SB-8: over small texts, searched by the guard whenever the built-in would compare more than ${bound} times`, () => {
      const read = guardedRealm(bound);
      expect(read("String.prototype.indexOf.toString()")).not.toContain("[native code]");
      for (const [size, seed] of [
        [12, 1],
        [60, 2],
        [400, 3],
      ] as const) {
        const source = `(${EVALUATE})((${CASES})(400, ${size}, ${seed}), false)`;
        expect(read(source)).toEqual(inHost(source));
      }
    });
  }

  it("R-SB-8: in the sandbox, small texts through the guard's path and large ones over the bound", async () => {
    expect(await inSandbox(150, 40, 4, true)).toEqual(expected(150, 40, 4, true));
    expect(await inSandbox(150, 40, 5, false)).toEqual(expected(150, 40, 5, false));
    expect(await inSandbox(30, 12_000, 7, false)).toEqual(expected(30, 12_000, 7, false));
  });

  it("R-SB-8: this and the arguments are converted once each, in spec order, hooks read as the built-in reads them", async () => {
    const program = `() => {
      const log = [];
      const big = "ab".repeat(3000), found = big.slice(1001, 2601);
      const logged = (name, value) => ({ toString() { log.push(name); return value; }, valueOf() { log.push(name + " valueOf"); return value; },
        get [Symbol.match]() { log.push(name + " match"); return undefined; },
        get [Symbol.split]() { log.push(name + " split"); return undefined; },
        get [Symbol.replace]() { log.push(name + " replace"); return null; } });
      const limit = { valueOf() { log.push("limit"); return 3; } };
      const position = { valueOf() { log.push("position"); return 7; } };
      const results = [];
      for (const text of [big, "abab"]) {
        const receiver = logged("this", text), needle = logged("needle", text === big ? found : "ba");
        results.push(String.prototype.indexOf.call(receiver, needle, position),
          String.prototype.lastIndexOf.call(receiver, needle, position),
          String.prototype.includes.call(receiver, needle, position),
          String.prototype.split.call(receiver, needle, limit).map((part) => part.length),
          String.prototype.replace.call(receiver, needle, logged("template", "<$\`|$&|$'>")).length,
          String.prototype.replaceAll.call(receiver, needle, logged("template", "$$")).length);
      }
      return { log, results };
    }`;
    expect(await returned(`return (${program})();`)).toEqual(inHost(`(${program})()`));
  });

  it("R-SB-8: a RegExp, or an object with Symbol.split or Symbol.replace, goes to its method as with the built-in; errors, names and lengths are the built-ins'", async () => {
    const program = `() => {
      const long = "a".repeat(120000);
      const splitter = { [Symbol.split](receiver, limit) { return ["split", typeof receiver, limit]; } };
      const replacer = { [Symbol.replace](receiver, value) { return "replaced " + receiver.length + " " + value; } };
      const outcome = (call) => { try { return call(); } catch (error) { return error.name; } };
      return [long.split(/a{3}/).length, long.replace(/a+/, "$&$&").length, long.replaceAll(/a/g, "").length, "a-b".split(/-/),
        long.split(splitter, 7), long.replace(replacer, 5), long.replaceAll(replacer, 6),
        outcome(() => long.replaceAll(/a/, "")), outcome(() => long.includes(/a/)),
        outcome(() => long.includes({ [Symbol.match]: 1, toString: () => "a" })), outcome(() => long.split({ [Symbol.split]: 1 })),
        outcome(() => String.prototype.indexOf.call(null, "a")), outcome(() => long.indexOf(Symbol())),
        outcome(() => long.lastIndexOf("a", 1n)), long.includes({ [Symbol.match]: 0, toString: () => "a".repeat(60000) }),
        outcome(() => new String.prototype.split()), Object.getOwnPropertyDescriptor(String.prototype, "split").enumerable,
        ["indexOf", "lastIndexOf", "includes", "split", "replace", "replaceAll"].map((name) => name + "/" + String.prototype[name].length)];
    }`;
    expect(await returned(`return (${program})();`)).toEqual(inHost(`(${program})()`));
  });

  it("R-SB-8: a hook the program puts on String.prototype is read as the engine's own built-in reads it", async () => {
    // V8 looks Symbol.split and Symbol.replace up on a primitive pattern too (as ES2023 did); quickjs-ng does not.
    const value = await returned(`const reads = [];
      for (const symbol of [Symbol.split, Symbol.replace])
        Object.defineProperty(String.prototype, symbol, { get() { reads.push(symbol.description); return undefined; }, configurable: true });
      const long = "ab".repeat(60000), needle = "b" + "ab".repeat(29999) + "c";
      return [long.split(needle).length, "a,b".split(",").length, long.replace(needle, "").length, "ab".replaceAll("b", "c"), reads];`);
    expect(value).toEqual([
      1,
      2,
      120000,
      "ac",
      onQuickJs ? [] : ["Symbol.split", "Symbol.split", "Symbol.replace", "Symbol.replace"],
    ]);
  });
});

describe("a program cannot get past the guard (R-SB-8)", () => {
  it("R-SB-8: a program that replaces String.prototype.indexOf affects only its own calls, and not the next pass", async () => {
    const value = await returned(`String.prototype.indexOf = function () { return 42; };
      String.prototype.split = function () { return ["mine"]; };
      return ["abc".indexOf("b"), "a-b".split("-"), "abc".includes("c"), "a-b".replace("-", "+"), "abcb".lastIndexOf("b")];`);
    expect(value).toEqual([42, ["mine"], true, "a+b", 3]);
    expect(await returned(`return ["abc".indexOf("b"), "a-b".split("-")];`)).toEqual([1, ["a", "b"]]);
  });

  /** Keeps the guarded methods under other names, then replaces every built-in the guard could have used. */
  const POISON = `for (const name of ["indexOf", "lastIndexOf", "includes", "split", "replace", "replaceAll"])
      String.prototype["kept_" + name] = String.prototype[name];
    globalThis.Math = { min: () => 0, max: () => 0 }; Reflect.apply = () => 0; Reflect.defineProperty = () => true;
    Function.prototype.call = function () { return 0; }; Function.prototype.apply = Function.prototype.call;
    Function.prototype.bind = function () { return () => 0; }; Array.prototype.push = () => 0;
    Object.defineProperty(Array.prototype, 0, { set() { throw new Error("setter"); }, configurable: true });
    Object.defineProperty(Object.prototype, "value", { get() { return "poisoned"; }, configurable: true });
    Object.defineProperty = () => ({}); Object.getOwnPropertyDescriptor = () => undefined;
    for (const name of ["slice", "charCodeAt", "at", "substring", "indexOf", "lastIndexOf", "includes", "split", "replace"])
      String.prototype[name] = () => 0;`;

  it("R-SB-8: replacing the built-ins the guard uses (Math, Reflect, Function.prototype, prototypes) changes none of its answers", async () => {
    const value = await returned(
      `${TEXTS} ${POISON}
      const answers = [atStart.kept_lastIndexOf(needle), never.kept_lastIndexOf(needle), atEnd.kept_indexOf(needle),
        atEnd.kept_includes(needle), atEnd.kept_split(needle).length, atEnd.kept_replace(needle, "[$&]").length,
        atEnd.kept_replaceAll(needle, "$'").length, "a-b".kept_split("-", 5)];
      delete Array.prototype[0]; delete Object.prototype.value;
      return answers;`,
      // The answers are the point (the next test holds the deadline): seven long searches take
      // 0.7 s alone on QuickJS, and over 2 s on a machine busy with other suites.
      10_000,
    );
    expect(value).toEqual([0, -1, 59999, true, 2, 120002, 59999, ["a", "b"]]);
  });

  it("R-SB-8: after such replacements, a loop of long searches still ends TIMEOUT at the deadline", async () => {
    const outcome = await run(
      `async () => { ${TEXTS} ${POISON} for (;;) never.kept_lastIndexOf(needle) + never.kept_split(needle); }`,
      {
        timeoutMs: 2_000,
      },
    );
    expectFailed(outcome, "TIMEOUT");
  });
});
