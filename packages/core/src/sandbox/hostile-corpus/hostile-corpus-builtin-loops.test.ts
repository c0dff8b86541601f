/**
 * Hostile corpus (see hostile-corpus-fixtures.ts): built-ins that loop in native code, where
 * neither V8 (under isolated-vm's termination) nor quickjs-ng 0.12 (its interrupt handler) stops
 * them. Over an array-like of 2^53 − 1 elements, or a sparse array of 2^32 − 1, each used to run
 * for hours and hold the pass past its deadline (with isolated-vm, the host too, as disposing the
 * isolate waited for it). Each is now refused with a RangeError the program may catch
 * (install-array-guard.ts).
 */
import { describe, expect, it } from "vitest";
import { expectReturned } from "../pass-fixtures.js";
import { hostileCorpus } from "./hostile-corpus-fixtures.js";

const { run } = hostileCorpus();

const HUGE = "({ length: 2 ** 53 - 1 })";
const SPARSE = "new Array(2 ** 32 - 1)";
/** [method, call] over a huge receiver: each must end, refused, well within a 2 s limit. */
const LOOPS: Array<[string, string]> = [
  ["indexOf", `Array.prototype.indexOf.call(${HUGE}, 0)`],
  ["lastIndexOf", `Array.prototype.lastIndexOf.call(${SPARSE}, 0)`],
  ["includes", `${SPARSE}.includes(1)`],
  ["join", `Array.prototype.join.call(${HUGE})`],
  ["join", `Array.prototype.toString.call({ length: 2 ** 53 - 1, join: Array.prototype.join })`],
  ["forEach", `Array.prototype.forEach.call(${HUGE}, () => {})`],
  ["every", `Array.prototype.every.call(${HUGE}, () => true)`],
  ["some", `Array.prototype.some.call(${HUGE}, () => false)`],
  ["find", `Array.prototype.find.call(${HUGE}, Boolean)`],
  ["reduce", `Array.prototype.reduce.call(${HUGE}, (a) => a, 0)`],
  ["reduceRight", `Array.prototype.reduceRight.call(${HUGE}, (a) => a, 0)`],
  ["map", `Array.prototype.map.call({ length: 2 ** 32 - 1 }, (x) => x)`],
  ["filter", `Array.prototype.filter.call(${HUGE}, (x) => x)`],
  ["reverse", `Array.prototype.reverse.call(${HUGE})`],
  ["copyWithin", `Array.prototype.copyWithin.call(${HUGE}, 0, 1)`],
  ["flat", `Array.prototype.flat.call(${HUGE})`],
  ["splice", `Array.prototype.splice.call({ length: 2 ** 53 - 2 }, 0, 1)`],
  ["unshift", `Array.prototype.unshift.call({ length: 2 ** 53 - 2 }, 1)`],
  ["sort", `${SPARSE}.sort()`],
  ["concat", `[].concat({ length: 2 ** 53 - 1, [Symbol.isConcatSpreadable]: true })`],
];

describe("built-ins that loop in native code (R-SB-3)", () => {
  for (const [method, call] of LOOPS) {
    it(`R-SB-3: ${call} is refused with a RangeError instead of running for hours`, async () => {
      const outcome = await run(
        `async () => { try { ${call}; return "ran"; } catch (error) { return error.name + ": " + error.message; } }`,
        {
          timeoutMs: 2_000,
        },
      );
      expect(expectReturned(outcome)).toMatch(
        new RegExp(
          `^RangeError: Array\\.prototype\\.${method} was called on \\d+ elements; in this sandbox it takes at most \\d+$`,
        ),
      );
    });
  }

  it("R-SB-3: a program cannot get past the guard by replacing the array iterator or Object", async () => {
    const outcome = await run(
      `async () => {
        Array.prototype[Symbol.iterator] = function* () {};
        globalThis.Object = function () { return { length: 0 }; };
        try { [].concat({ length: 2 ** 53 - 1, [Symbol.isConcatSpreadable]: true }); return "ran"; }
        catch (error) { return error.name; }
      }`,
      { timeoutMs: 2_000 },
    );
    expect(expectReturned(outcome)).toBe("RangeError");
  });

  it("R-SB-3: the guarded methods behave as the built-ins on ordinary arrays", async () => {
    const outcome = await run(
      `async () => [
        [1, 2, 3].indexOf(2), [3, 1, 2].sort().join(""), [1, [2, [3]]].flat(2).length, [1, 2].concat([3], 4).length,
        Array.prototype.join.length, [].indexOf.name, Array.prototype.map.call("ab", (c) => c + c).join(""),
        (() => { try { Array.prototype.indexOf.call(null, 1); } catch (error) { return error.name; } })(),
        Object.getOwnPropertyDescriptor(Array.prototype, "map").enumerable,
      ]`,
    );
    expect(expectReturned(outcome)).toEqual([1, "123", 3, 4, 1, "indexOf", "aabb", "TypeError", false]);
  });
});
