import { describe, expect, it } from "vitest";
import { installIntlGuard } from "./install-intl-guard.js";
import { partRealm } from "./part-realm-fixtures.js";

/** A fresh realm with the Intl guard installed from its source text, as prelude.ts injects it. */
function guardedRealm(maxIntlObjects = 1_000): (expression: string) => unknown {
  const { global, load, intrinsics, read } = partRealm();
  load(installIntlGuard)(intrinsics, global, maxIntlObjects);
  return read;
}

const attempt = (expression: string) =>
  `(() => { try { return ${expression}; } catch (error) { return error.name + ': ' + error.message; } })()`;

describe("installIntlGuard (issue 17.2)", () => {
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
