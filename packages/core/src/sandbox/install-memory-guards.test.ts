import { type Context, createContext, runInContext } from "node:vm";
import { describe, expect, it } from "vitest";
import { installMemoryGuards } from "./install-memory-guards.js";

/** A fresh realm with the guards installed from their source text, as prelude.ts injects them. */
function guardedRealm(maxIntlObjects = 1_000): (expression: string) => unknown {
  const context: Context = createContext();
  const install = runInContext(`(${installMemoryGuards.toString()})`, context) as typeof installMemoryGuards;
  install(runInContext("globalThis", context) as Record<string, unknown>, maxIntlObjects);
  return (expression) => runInContext(expression, context);
}

const attempt = (expression: string) =>
  `(() => { try { return ${expression}; } catch (error) { return error.name + ': ' + error.message; } })()`;

describe("installMemoryGuards (issue 17.2)", () => {
  it("refuses resizable ArrayBuffers and growable SharedArrayBuffers, whose memory the heap limit does not count", () => {
    const read = guardedRealm();
    expect(read(attempt("new ArrayBuffer(8, { maxByteLength: 2 ** 30 })"))).toMatch(
      /^RangeError: ArrayBuffer with maxByteLength is not available/,
    );
    expect(read(attempt("new SharedArrayBuffer(8, { maxByteLength: 2 ** 30 })"))).toMatch(
      /^RangeError: SharedArrayBuffer with maxByteLength is not available/,
    );
    expect(read("[new ArrayBuffer(8).resizable, new SharedArrayBuffer(8).growable]")).toEqual([false, false]);
  });

  it("fixed-length buffers work as before: byteLength, instanceof, constructor, species, subclasses, options without maxByteLength", () => {
    const read = guardedRealm();
    expect(
      read(`[
        new ArrayBuffer(8).byteLength,
        new ArrayBuffer(8, {}).byteLength,
        new ArrayBuffer(8, { maxByteLength: undefined }).byteLength,
        new Uint8Array(4).buffer instanceof ArrayBuffer,
        new Uint8Array(4).buffer.constructor === ArrayBuffer,
        new ArrayBuffer(8).slice(2).byteLength,
        new (class Sub extends ArrayBuffer {})(3) instanceof ArrayBuffer,
        ArrayBuffer.isView(new Uint8Array(1)),
        ArrayBuffer.name,
        ArrayBuffer.length,
        new SharedArrayBuffer(4).byteLength,
      ]`),
    ).toEqual([8, 8, 8, true, true, 6, true, true, "ArrayBuffer", 1, 4]);
    expect(read(attempt("ArrayBuffer(8)"))).toBe("TypeError: Constructor ArrayBuffer requires 'new'");
  });

  it("converts the length before the original constructor runs, once", () => {
    const read = guardedRealm();
    expect(read("let reads = 0; [new ArrayBuffer({ valueOf() { reads++; return 5; } }).byteLength, reads]")).toEqual([
      5, 1,
    ]);
  });

  it("a pass may create at most maxIntlObjects Intl objects; formatting without keeping one is not counted", () => {
    const read = guardedRealm(10);
    expect(
      read("const kept = []; for (let i = 0; i < 10; i++) kept.push(new Intl.NumberFormat('en')); kept.length"),
    ).toBe(10);
    expect(read(attempt("new Intl.DateTimeFormat('en')"))).toMatch(
      /^RangeError: a pass may create at most 10 Intl objects/,
    );
    expect(read(attempt("Intl.Collator('en')"))).toMatch(/^RangeError/);
    expect(
      read(
        "[(5).toLocaleString('de', { style: 'currency', currency: 'EUR' }).replace(/\\s/g, ' '), 'a'.localeCompare('b', 'fr')]",
      ),
    ).toEqual(["5,00 €", -1]);
  });

  it("Intl constructors keep working: with or without new, instanceof, statics", () => {
    const read = guardedRealm();
    expect(
      read(`[
        new Intl.NumberFormat('en').format(1234.5),
        Intl.NumberFormat('en') instanceof Intl.NumberFormat,
        new Intl.DateTimeFormat('en', { timeZone: 'UTC' }).format(0),
        Intl.DateTimeFormat.supportedLocalesOf(['en']).length,
        new Intl.Locale('en-Latn-US').maximize().toString(),
        Intl.Collator.name,
        typeof Intl.getCanonicalLocales,
      ]`),
    ).toEqual(["1,234.5", true, "1/1/1970", 1, "en-Latn-US", "Collator", "function"]);
  });

  it("segments and their iterators count as Intl objects", () => {
    const read = guardedRealm(3);
    expect(
      read(
        attempt(
          "(() => { const segments = new Intl.Segmenter('en').segment('a b'); const words = [...segments].length; return [words, [...segments].length]; })()",
        ),
      ),
    ).toMatch(/^RangeError: a pass may create at most 3 Intl objects/);
  });

  it("Intl reads as a data property once used, and can be replaced like any global", () => {
    const read = guardedRealm();
    expect(
      read(
        "const before = Object.getOwnPropertyDescriptor(globalThis, 'Intl'); typeof Intl; const after = Object.getOwnPropertyDescriptor(globalThis, 'Intl'); [typeof before.get, 'value' in after, after.enumerable]",
      ),
    ).toEqual(["function", true, false]);
    expect(read("globalThis.Intl = 5; Intl")).toBe(5);
  });
});
