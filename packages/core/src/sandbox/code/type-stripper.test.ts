import { describe, expect, it } from "vitest";
import { normalizeCode } from "./normalize-code.js";
import { MAX_NESTING } from "./type-stripper.js";

const typescript = "async () => { const total: number = 2; return total as number; }";
const withEnum = "enum Color { Red, Green }\nasync () => Color.Green";

function expectStripperHealthy(): void {
  expect(normalizeCode(typescript)).toMatchObject({ ok: true, language: "typescript" });
  expect(normalizeCode(withEnum)).toMatchObject({ ok: true, language: "typescript" });
}

describe("the type stripper is isolated from hostile input (issue 17.3)", () => {
  it("R-SB-2: code nested deeper than the limit is a syntax error, and TypeScript keeps working", () => {
    expect(normalizeCode("(".repeat(1_000))).toMatchObject({
      ok: false,
      message: `the code nests brackets more than ${MAX_NESTING} levels deep`,
      line: 1,
    });
    expectStripperHealthy();
    expect(normalizeCode(`let x: number = ${"[".repeat(300)}`)).toMatchObject({ ok: false });
    expectStripperHealthy();
  });

  it("R-SB-2: a crash inside the stripper (deep chains without brackets) is a syntax error, and never poisons later calls", () => {
    for (const hostile of [
      `${"x => ".repeat(3_000)}x as any`,
      `${"!".repeat(30_000)}x as any`,
      `${"a ? ".repeat(8_000)}b${" : c".repeat(8_000)} as any`,
    ]) {
      const result = normalizeCode(hostile);
      expect(result.ok).toBe(false);
      expectStripperHealthy();
    }
  });

  it("R-SB-2: the crash is reported as such, with the reason", () => {
    const result = normalizeCode(`${"!".repeat(30_000)}x as any`);
    expect(result).toMatchObject({ ok: false });
    if (!result.ok)
      expect(result.message).toMatch(
        /the TypeScript stripper could not read this code \(.+\): it is nested too deeply/,
      );
  });

  it("R-SB-2: ordinary nesting well below the limit still strips", () => {
    const nested = `let x: number = ${"(".repeat(100)}1${")".repeat(100)};\nx`;
    expect(normalizeCode(nested)).toMatchObject({ ok: true, language: "typescript" });
  });
});
