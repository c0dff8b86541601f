/**
 * Hostile corpus (see hostile-corpus-fixtures.ts): array built-ins over a receiver that answers
 * its `length` differently the second time it is read. The array guard (install-array-guard.ts)
 * used to check one length and hand the built-in the receiver, which read another: 0, then
 * 2^53 − 1, and the built-in looped in native code for hours, past any deadline. Now the length
 * checked is the length the built-in loops over (R-SB-8): a receiver that is not a genuine array
 * reaches the built-in as a snapshot of that length, and the built-in returns what it computes over
 * it. Every program runs on the executor `CODEMODE_EXECUTOR` names (isolated-vm or QuickJS).
 */
import { describe, expect, it } from "vitest";
import { expectReturned } from "../pass-fixtures.js";
import { hostileCorpus } from "./hostile-corpus-fixtures.js";

const { run } = hostileCorpus();

/** Runs `body` (statements that return) with a 2 s limit: the pass must return, whatever it computed. */
async function returned(body: string): Promise<unknown> {
  return expectReturned(await run(`async () => { ${body} }`, { timeoutMs: 2_000 }));
}

/** An array-like whose `length` getter answers 0 the first time and 2^53 − 1 afterwards. */
const LIAR = `() => { let reads = 0; return { get length() { return reads++ === 0 ? 0 : 2 ** 53 - 1; }, [Symbol.isConcatSpreadable]: true }; }`;
/** A proxy of an array whose `get` trap does the same (array `length` is writable, so a proxy may report anything). */
const PROXY_LIAR = `() => { let reads = 0; return new Proxy([1, 2], { get(target, key) {
  return key === "length" ? (reads++ === 0 ? 0 : 2 ** 53 - 1) : target[key]; } }); }`;
/** What a call returned, in words: the receiver itself, an array and its length, a value, or the error's name. */
const DESCRIBE = `(call, receiver) => { try { const result = call(receiver);
  return result === receiver ? "receiver" : Array.isArray(result) ? "array:" + result.length : "value:" + String(result);
} catch (error) { return "error:" + error.name; } }`;

/**
 * [method, call, over the lying array-like, over the lying proxy]: what each returns over the
 * length checked, 0. A setter-less `length` makes the methods that set it throw TypeError, as the
 * built-in does over such a receiver; `with(0, …)` is out of range over no element.
 */
const METHODS: Array<[string, string, string, string]> = [
  ["indexOf", "Array.prototype.indexOf.call(r, 1)", "value:-1", "value:-1"],
  ["lastIndexOf", "Array.prototype.lastIndexOf.call(r, 1)", "value:-1", "value:-1"],
  ["includes", "Array.prototype.includes.call(r, 1)", "value:false", "value:false"],
  ["join", "Array.prototype.join.call(r)", "value:", "value:"],
  ["toString", "Array.prototype.toString.call(Object.assign(r, { join: Array.prototype.join }))", "value:", "value:"],
  ["toLocaleString", "Array.prototype.toLocaleString.call(r)", "value:", "value:"],
  ["slice", "Array.prototype.slice.call(r)", "array:0", "array:0"],
  ["fill", "Array.prototype.fill.call(r, 0)", "receiver", "receiver"],
  ["reverse", "Array.prototype.reverse.call(r)", "receiver", "receiver"],
  ["copyWithin", "Array.prototype.copyWithin.call(r, 0, 1)", "receiver", "receiver"],
  ["splice", "Array.prototype.splice.call(r, 0, 1)", "error:TypeError", "array:0"],
  ["shift", "Array.prototype.shift.call(r)", "error:TypeError", "value:undefined"],
  ["unshift", "Array.prototype.unshift.call(r, 1)", "error:TypeError", "value:1"],
  ["toReversed", "Array.prototype.toReversed.call(r)", "array:0", "array:0"],
  ["toSpliced", "Array.prototype.toSpliced.call(r, 0, 1)", "array:0", "array:0"],
  ["with", "Array.prototype.with.call(r, 0, 1)", "error:RangeError", "error:RangeError"],
  ["sort", "Array.prototype.sort.call(r)", "receiver", "receiver"],
  ["toSorted", "Array.prototype.toSorted.call(r)", "array:0", "array:0"],
  ["forEach", "Array.prototype.forEach.call(r, () => {})", "value:undefined", "value:undefined"],
  ["every", "Array.prototype.every.call(r, () => true)", "value:true", "value:true"],
  ["some", "Array.prototype.some.call(r, () => false)", "value:false", "value:false"],
  ["find", "Array.prototype.find.call(r, () => false)", "value:undefined", "value:undefined"],
  ["findIndex", "Array.prototype.findIndex.call(r, () => false)", "value:-1", "value:-1"],
  ["findLast", "Array.prototype.findLast.call(r, () => false)", "value:undefined", "value:undefined"],
  ["findLastIndex", "Array.prototype.findLastIndex.call(r, () => false)", "value:-1", "value:-1"],
  ["map", "Array.prototype.map.call(r, (x) => x)", "array:0", "array:0"],
  ["filter", "Array.prototype.filter.call(r, () => true)", "array:0", "array:0"],
  ["reduce", "Array.prototype.reduce.call(r, (a) => a, 7)", "value:7", "value:7"],
  ["reduceRight", "Array.prototype.reduceRight.call(r, (a) => a, 7)", "value:7", "value:7"],
  ["flat", "Array.prototype.flat.call(r)", "array:0", "array:0"],
  ["flatMap", "Array.prototype.flatMap.call(r, (x) => x)", "array:0", "array:0"],
  ["concat (receiver)", "Array.prototype.concat.call(r, [])", "array:0", "array:0"],
  ["concat (argument)", "[].concat(r)", "array:0", "array:0"],
  ["Array.from", "Array.from(r)", "array:0", "array:0"],
];

describe("array built-ins over a length that changes between reads (R-SB-8)", () => {
  for (const [method, call, overLiar, overProxy] of METHODS) {
    it(`R-SB-8: ${method} over a length answering 0, then 2^53 − 1, returns what it computes over 0`, async () => {
      const value = await returned(`const describe = ${DESCRIBE};
        return [describe((r) => ${call}, (${LIAR})()), describe((r) => ${call}, (${PROXY_LIAR})())];`);
      expect(value).toEqual([overLiar, overProxy]);
    });
  }

  it("R-SB-8: a nested proxy of an array that lies is checked as flat reaches it, and refused", async () => {
    const value = await returned(`const liar = (${PROXY_LIAR})();
      liar.length;
      const outcomes = [];
      for (const call of [() => [liar].flat(), () => [0].flatMap(() => liar), () => [[[liar]]].flat(Infinity)]) {
        try { call(); outcomes.push("ran"); } catch (error) { outcomes.push(error.name + ": " + error.message); }
      }
      return outcomes;`);
    expect(value).toEqual([
      expect.stringMatching(/^RangeError: Array\.prototype\.flat was called on 9007199254740991 elements/),
      expect.stringMatching(/^RangeError: Array\.prototype\.flatMap was called on 9007199254740991 elements/),
      expect.stringMatching(/^RangeError: Array\.prototype\.flat was called on 9007199254740991 elements/),
    ]);
  });

  it("R-SB-8: a sparse array nested in flat, or lengthened by a getter while flat runs, is refused", async () => {
    const value = await returned(`const outcomes = [];
      const inner = [1];
      const outer = [0, inner];
      Object.defineProperty(outer, 0, { get() { inner.length = 2 ** 32 - 1; return 0; } });
      for (const call of [() => [new Array(2 ** 32 - 1)].flat(), () => outer.flat()]) {
        try { call(); outcomes.push("ran"); } catch (error) { outcomes.push(error.name); }
      }
      return outcomes;`);
    expect(value).toEqual(["RangeError", "RangeError"]);
  });

  it("R-SB-8: concat reads no length the program lengthened after the check (species, getters)", async () => {
    const value = await returned(`const viaSpecies = (() => {
        const a = [1]; const b = [2];
        a.constructor = { [Symbol.species]: function () { b.length = 2 ** 32 - 2; return []; } };
        return a.concat(b);
      })();
      const viaGetter = (() => {
        const a = [0]; const b = [2]; const c = [3];
        Object.defineProperty(a, 0, { get() { c.length = 2 ** 32 - 2; return 1; } });
        return a.concat(b, c);
      })();
      // A getter that turns Array.prototype.constructor into a getter, which lengthens the last item.
      const viaPrototype = (() => {
        const a = [1]; const b = [0]; const c = [3];
        const lengthening = { get() { c.length = 2 ** 32 - 2; return Array; }, configurable: true };
        Object.defineProperty(b, 0, { get() { Object.defineProperty(Array.prototype, "constructor", lengthening); return 2; } });
        try { return a.concat(b, 1, c); }
        finally { Object.defineProperty(Array.prototype, "constructor", { value: Array, writable: true, configurable: true }); }
      })();
      return [viaSpecies, viaGetter, viaPrototype];`);
    expect(value).toEqual([
      [1, 2],
      [1, 2, 3],
      [1, 2, 1, 3],
    ]);
  });

  it("R-SB-8: the built-ins the guard missed before (slice, fill, Array.from) refuse a huge array-like", async () => {
    const value = await returned(`const outcomes = [];
      for (const call of [() => Array.prototype.slice.call({ length: 2 ** 32 - 1 }),
        () => Array.prototype.fill.call({ length: 2 ** 53 - 1 }, 0), () => Array.from({ length: 2 ** 32 - 1 })]) {
        try { call(); outcomes.push("ran"); } catch (error) { outcomes.push(error.message); }
      }
      return outcomes;`);
    expect(value).toEqual([
      expect.stringMatching(/^Array\.prototype\.slice was called on 4294967295 elements; in this sandbox/),
      expect.stringMatching(/^Array\.prototype\.fill was called on 9007199254740991 elements; in this sandbox/),
      expect.stringMatching(/^Array\.from was called on 4294967295 elements; in this sandbox it takes at most/),
    ]);
  });
});

describe("the guarded built-ins still work (R-SB-8)", () => {
  it("R-SB-8: on genuine arrays they behave as the built-ins", async () => {
    const value = await returned(`const a = [3, 1, 2];
      return [a.indexOf(2), a.lastIndexOf(3), a.includes(1), a.join("-"), String(a), a.slice(1), [0, 0, 0].fill(7, 1),
        [1, 2, 3].reverse(), [1, 2, 3, 4].copyWithin(0, 2), (() => { const s = [1, 2, 3]; return [s.splice(1, 1), s]; })(),
        (() => { const s = [1, 2]; return [s.shift(), s.unshift(0, 0), s]; })(), a.toReversed(), a.toSpliced(0, 1), a.with(0, 9),
        [...a].sort(), a.toSorted(), a.every((x) => x > 0), a.some((x) => x > 2), a.find((x) => x < 3), a.findIndex((x) => x < 3),
        a.findLast((x) => x < 3), a.findLastIndex((x) => x < 3), a.map((x) => x * 2), a.filter((x) => x > 1),
        a.reduce((s, x) => s + x, 0), a.reduceRight((s, x) => s + x, ""), [1, [2, [3, [4]]]].flat(2), [1, [2, [3]]].flat(Infinity),
        [1, 2].flatMap(function (x) { return [x, this.k]; }, { k: 0 }), [1].concat(2, [3, [4]], { 0: 5, length: 1 }).length,
        Array.from("ab"), Array.from(new Set([1, 1, 2])), Array.from([1, 2], (x) => x * 3), Array.from({ length: 3 }, (_, i) => i),
        a.toLocaleString(), (() => { let sum = 0; a.forEach((x) => { sum += x; }); return sum; })(), a];`);
    expect(value).toEqual([
      2,
      0,
      true,
      "3-1-2",
      "3,1,2",
      [1, 2],
      [0, 7, 7],
      [3, 2, 1],
      [3, 4, 3, 4],
      [[2], [1, 3]],
      [1, 3, [0, 0, 2]],
      [2, 1, 3],
      [1, 2],
      [9, 1, 2],
      [1, 2, 3],
      [1, 2, 3],
      true,
      true,
      1,
      1,
      2,
      2,
      [6, 2, 4],
      [3, 2],
      6,
      "213",
      [1, 2, 3, [4]],
      [1, 2, 3],
      [1, 0, 2, 0],
      5,
      ["a", "b"],
      [1, 2],
      [3, 6],
      [0, 1, 2],
      "3,1,2",
      6,
      [3, 1, 2],
    ]);
  });

  it("R-SB-8: holes, species and the errors of the built-ins stay as they were", async () => {
    const value = await returned(`class Stack extends Array {}
      const joined = [1, , 3].concat([4, , 6]);
      const errors = [];
      for (const call of [() => Array.prototype.indexOf.call(null, 1), () => [].flatMap(1), () => [1].map(2),
        () => Array.from(null), () => [].reduce((a) => a)]) {
        try { call(); errors.push("ran"); } catch (error) { errors.push(error.name); }
      }
      return [joined.length, 1 in joined, 4 in joined, [1, , [2, , 3]].flat(), Stack.from([1]).concat([2]) instanceof Stack,
        Stack.from([1, [2]]).flat() instanceof Stack, new Stack(1, 2).map((x) => x) instanceof Stack, errors,
        [].indexOf.name, Array.prototype.join.length, Array.from.length, Object.getOwnPropertyDescriptor(Array.prototype, "map").enumerable];`);
    expect(value).toEqual([
      6,
      false,
      false,
      [1, 2, 3],
      true,
      true,
      true,
      ["TypeError", "TypeError", "TypeError", "TypeError", "TypeError"],
      "indexOf",
      1,
      1,
      false,
    ]);
  });

  it("R-SB-8: the results of flat, flatMap, concat and Array.from get their elements defined, never set", async () => {
    const value = await returned(`Object.defineProperty(Array.prototype, 0, {
        set() { throw new Error("set"); }, get() { return "inherited"; }, configurable: true });
      const results = [[[1, 2]].flat(), [[1], 2].flatMap((x) => x), [1].concat([2]), Array.from([1, 2]), Array.from({ length: 1 })];
      delete Array.prototype[0];
      return results;`);
    expect(value).toEqual([[1, 2], [1, 2], [1, 2], [1, 2], [null]]);
  });
});

describe("the guarded built-ins over array-likes and proxies (R-SB-8)", () => {
  it("R-SB-8: honest array-likes, strings, typed arrays and proxies of arrays go through as before", async () => {
    const value = await returned(`const counted = { get length() { return 2; }, 0: "a", 1: "b" };
      const seen = [];
      const mapped = Array.prototype.map.call(counted, (x, i, array) => { seen.push(array === counted); return x + i; });
      Array.prototype.reduce.call(counted, (sum, x, i, array) => { seen.push(array === counted); return sum; }, 0);
      const proxy = new Proxy([3, 1, 2], {});
      return [Array.prototype.map.call({ length: 2, 0: "a", 1: "b" }, (x) => x), mapped, seen,
        Array.prototype.map.call("ab", (c) => c + c), Array.prototype.map.call(new Uint8Array([1, 2]), (x) => x * 2),
        (function () { return Array.prototype.slice.call(arguments, 1); })(1, 2, 3), Array.isArray(new Proxy([], {})),
        proxy.map((x) => x * 2), [0].concat(proxy), [proxy, [proxy]].flat(2), Array.from(proxy), proxy.indexOf(2), proxy.join("")];`);
    expect(value).toEqual([
      ["a", "b"],
      ["a0", "b1"],
      [true, true, true, true],
      ["aa", "bb"],
      [2, 4],
      [2, 3],
      true,
      [6, 2, 4],
      [0, 3, 1, 2],
      [3, 1, 2, 3, 1, 2],
      [3, 1, 2],
      2,
      "312",
    ]);
  });

  it("R-SB-8: the mutating methods change an array-like, or a proxy's target, through the snapshot", async () => {
    const value = await returned(`const like = () => { const o = { 0: "c", 1: "a", 2: "b", size: 3 };
        Object.defineProperty(o, "length", { get() { return this.size; }, set(value) { this.size = value; } });
        return o; };
      const show = (o) => Array.from({ length: o.length }, (_, i) => o[i]).join("") + "/" + o.length;
      const results = [];
      for (const [name, call] of [["sort", (o) => Array.prototype.sort.call(o)], ["reverse", (o) => Array.prototype.reverse.call(o)],
        ["splice", (o) => Array.prototype.splice.call(o, 1, 1)], ["copyWithin", (o) => Array.prototype.copyWithin.call(o, 0, 2)],
        ["fill", (o) => Array.prototype.fill.call(o, "x", 1)], ["shift", (o) => Array.prototype.shift.call(o)],
        ["unshift", (o) => Array.prototype.unshift.call(o, "z")]]) {
        const o = like();
        const target = ["c", "a", "b"];
        call(o);
        call(new Proxy(target, {}));
        results.push(name + " " + show(o) + " " + show(target));
      }
      return results;`);
    expect(value).toEqual([
      "sort abc/3 abc/3",
      "reverse bac/3 bac/3",
      "splice cb/2 cb/2",
      "copyWithin bab/3 bab/3",
      "fill cxx/3 cxx/3",
      "shift ab/2 ab/2",
      "unshift zcab/4 zcab/4",
    ]);
  });

  it("R-SB-8: Proxy still behaves as the built-in for programs, Proxy.revocable included", async () => {
    const value = await returned(`const handled = new Proxy({}, { get: (target, key) => "got " + String(key) });
      const { proxy, revoke } = Proxy.revocable([1, 2], {});
      const before = proxy.length;
      revoke();
      const errors = [];
      for (const call of [() => Proxy({}, {}), () => proxy.length, () => new Proxy(1, {}), () => new Proxy.revocable({}, {}),
        () => ({}) instanceof Proxy, () => { class Sub extends Proxy {} }]) {
        try { call(); errors.push("ran"); } catch (error) { errors.push(error.name); }
      }
      return [handled.x, before, errors, typeof Proxy, Proxy.name, Proxy.length, "prototype" in Proxy, Proxy.revocable.name,
        Proxy.revocable.length, Array.isArray(new Proxy([], {})), Object.getOwnPropertyDescriptor(globalThis, "Proxy").enumerable,
        Reflect.construct(Proxy, [[5], {}], Object).length];`);
    expect(value).toEqual([
      "got x",
      2,
      ["TypeError", "TypeError", "TypeError", "TypeError", "TypeError", "TypeError"],
      "function",
      "Proxy",
      2,
      false,
      "revocable",
      2,
      true,
      false,
      1,
    ]);
  });
});

describe("a program that tampers with built-ins after setup (R-SB-8)", () => {
  it("R-SB-8: replacing Reflect, Object, WeakSet, Proxy and prototype methods does not defeat the guard", async () => {
    const value = await returned(`const liars = [(${LIAR})(), (${LIAR})(), (${LIAR})()];
      const proxyLiars = [(${PROXY_LIAR})(), (${PROXY_LIAR})(), (${PROXY_LIAR})()];
      const indexOf = Function.prototype.call.bind(Array.prototype.indexOf);
      const map = Function.prototype.call.bind(Array.prototype.map);
      const ObjectPrototype = Object.prototype;
      const concatTarget = [2];
      Reflect.apply = () => 0; Reflect.get = () => 0; Reflect.construct = () => ({}); Reflect.getPrototypeOf = () => Array.prototype;
      Object.defineProperty = () => {}; Object.getOwnPropertyDescriptor = () => ({ value: 0 }); Object.hasOwn = () => false;
      Array.isArray = () => true; WeakSet.prototype.has = () => false; WeakSet.prototype.add = () => {};
      Function.prototype.call = function () { return 0; }; Function.prototype.apply = function () { return 0; };
      Function.prototype.bind = function () { return () => 0; };
      ObjectPrototype.__lookupGetter__ = () => undefined; Array.prototype[Symbol.iterator] = function* () {};
      Object.defineProperty(ObjectPrototype, "value", { get() { return 0; }, configurable: true });
      ObjectPrototype.get = function () { return 0; };
      ObjectPrototype.construct = function () { return {}; };
      globalThis.Proxy = function FakeProxy() {};
      globalThis.Object = function () { return { length: 0 }; };
      const calls = [() => indexOf(liars[0], 1), () => indexOf(proxyLiars[0], 1), () => [proxyLiars[1]].flat(),
        () => [].concat(proxyLiars[2]), () => Array.from(liars[1]), () => map(liars[2], (x) => x),
        () => { const a = [1]; a.constructor = { [Symbol.species]: function () { concatTarget.length = 2 ** 32 - 2; return []; } };
          return a.concat(concatTarget).length; }];
      const outcomes = [];
      for (let index = 0; index < calls.length; index++) {
        try { outcomes.push(JSON.stringify(calls[index]())); } catch (error) { outcomes.push(error.name); }
      }
      delete ObjectPrototype.get; delete ObjectPrototype.construct; delete ObjectPrototype.value;
      return outcomes;`);
    expect(value).toEqual(["-1", "-1", "[]", "[]", "[]", "[]", "2"]);
  });

  it("R-SB-8: a trap a program puts on Object.prototype never sees the unwrapped Proxy constructor", async () => {
    const value = await returned(`const seen = [];
      for (const trap of ["get", "apply", "construct", "getOwnPropertyDescriptor", "has", "ownKeys", "defineProperty"]) {
        Object.prototype[trap] = function (target) { seen.push(typeof target); return Reflect[trap](...arguments); };
      }
      const made = new Proxy([1, 2], Object.create(null));
      const names = [Proxy.name, Proxy.revocable.name, Object.getOwnPropertyNames(Proxy).length > 0];
      for (const trap of ["get", "apply", "construct", "getOwnPropertyDescriptor", "has", "ownKeys", "defineProperty"]) {
        delete Object.prototype[trap];
      }
      return [seen, names, Array.prototype.indexOf.call(made, 2)];`);
    expect(value).toEqual([[], ["Proxy", "revocable", true], 1]);
  });
});
