import { type Context, createContext, runInContext } from "node:vm";
import { describe, expect, it } from "vitest";
import { installRandom } from "./install-random.js";
import { loadValueCodec } from "./value-codec.js";

/**
 * A fresh realm with `crypto` (and, with a seed, `Math.random`) installed from the source text,
 * as prelude.ts injects it; `randomBytes` stands in for the host's callback.
 */
function realmWithRandom(seed: string | null, randomBytes: (count: number) => string = () => "") {
  const context: Context = createContext();
  const load = <Part>(part: Part): Part => runInContext(`(${String(part)})`, context) as Part;
  const global = runInContext("globalThis", context) as Record<string, unknown>;
  const originalMathRandom = global.Math && (global.Math as { random: unknown }).random;
  load(installRandom)(global, seed === null ? null : { seed }, loadValueCodec(load), randomBytes);
  return { originalMathRandom, read: (expression: string): unknown => runInContext(expression, context) };
}

const DRAWS =
  "[Math.random(), Math.random(), Math.random(), crypto.randomUUID(), Array.from(crypto.getRandomValues(new Uint32Array(3))), Array.from(crypto.getRandomValues(new Uint8Array(7)))]";

describe("installRandom: replay-stable randomness (R-SB-6)", () => {
  it("keeps drawing what executions already recorded drew (the generator must never change)", () => {
    expect(realmWithRandom("execution-1").read(DRAWS)).toEqual([
      0.1912599573843181,
      0.08438511146232486,
      0.441591426031664,
      "1652abbf-46be-4714-bdad-0886fc01f32d",
      [2983677655, 63602075, 2947043138],
      [17, 174, 170, 18, 44, 42, 13],
    ]);
  });

  it("every pass of one execution draws the same numbers; another execution draws others", () => {
    const many = "Array.from({ length: 500 }, () => Math.random())";
    const firstPass = realmWithRandom("execution-1").read(many) as number[];
    expect(realmWithRandom("execution-1").read(many)).toEqual(firstPass);
    expect(realmWithRandom("execution-2").read(many)).not.toEqual(firstPass);
    for (const value of [...firstPass, ...(realmWithRandom("").read(many) as number[])])
      expect(value >= 0 && value < 1).toBe(true);
  });

  it("randomUUID gives version 4 UUIDs; getRandomValues fills integer typed arrays in place", () => {
    const { read } = realmWithRandom("uuids");
    const uuids = read("Array.from({ length: 20 }, () => crypto.randomUUID())") as string[];
    for (const uuid of uuids)
      expect(uuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(new Set(uuids).size).toBe(20);
    expect(
      read(
        "const array = new Int16Array(9); crypto.getRandomValues(array) === array && array.some((value) => value !== 0)",
      ),
    ).toBe(true);
  });

  it("getRandomValues refuses float arrays, non-arrays and more than 65536 bytes", () => {
    const { read } = realmWithRandom("refusals");
    const attempt = (argument: string) =>
      read(
        `try { crypto.getRandomValues(${argument}); 'filled' } catch (error) { error.constructor.name + ': ' + error.message }`,
      );
    expect(attempt("new Float64Array(1)")).toBe("TypeError: crypto.getRandomValues needs an integer typed array");
    expect(attempt("new Float32Array(1)")).toBe("TypeError: crypto.getRandomValues needs an integer typed array");
    expect(attempt("{ length: 4 }")).toBe("TypeError: crypto.getRandomValues needs an integer typed array");
    expect(attempt("new Uint8Array(65537)")).toBe("RangeError: crypto.getRandomValues: at most 65536 bytes at a time");
    expect(attempt("new Uint8Array(65536)")).toBe("filled");
  });
});

describe("installRandom: real randomness", () => {
  it("leaves V8's Math.random alone; crypto is a frozen, non-enumerable global", () => {
    const { originalMathRandom, read } = realmWithRandom(null, () => Buffer.alloc(1024, 3).toString("base64"));
    expect(read("Math.random")).toBe(originalMathRandom);
    expect(
      read("[Object.isFrozen(crypto), Object.keys(globalThis).includes('crypto'), Object.getPrototypeOf(crypto)]"),
    ).toEqual([true, false, null]);
  });

  it("draws the host's bytes 1 KiB at a time, as big-endian words", () => {
    const counts: number[] = [];
    const bytes = Buffer.alloc(1024, 0);
    bytes.set([1, 2, 3, 4, 255, 255, 255, 255]);
    const { read } = realmWithRandom(null, (count) => {
      counts.push(count);
      return bytes.toString("base64");
    });
    // getRandomValues writes each word little-end first.
    expect(read("Array.from(crypto.getRandomValues(new Uint32Array(2)))")).toEqual([0x01020304, 0xffffffff]);
    read("crypto.getRandomValues(new Uint32Array(254))");
    expect(counts).toEqual([1024]);
    expect(read("crypto.getRandomValues(new Uint32Array(1))[0]")).toBe(0x01020304);
    expect(counts).toEqual([1024, 1024]);
  });
});
