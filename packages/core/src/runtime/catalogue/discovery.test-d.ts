// Type-level tests: checked by tsc (vitest typecheck), never run.
import { describe, expectTypeOf, test } from "vitest";
import type { CodemodeRuntime } from "../handle/interface.js";

declare const runtime: CodemodeRuntime;

describe("runtime.describe reads without an `in` check (R-SN-3)", () => {
  test("declaration, source and error are optional members of every variant", async () => {
    const described = await runtime.describe("tickets.create");
    expectTypeOf(described.declaration).toEqualTypeOf<string | undefined>();
    expectTypeOf(described.source).toEqualTypeOf<string | undefined>();
    expectTypeOf(described.error).toEqualTypeOf<string | undefined>();
    expectTypeOf(described.kind).toEqualTypeOf<"connector" | "method" | "snippet" | undefined>();
    expectTypeOf(described.path).toEqualTypeOf<string | undefined>();
  });

  test("kind still narrows to the variant's own members", async () => {
    const described = await runtime.describe("tickets.create");
    if (described.kind === "method") {
      expectTypeOf(described.declaration).toBeString();
      expectTypeOf(described.requiresApproval).toEqualTypeOf<boolean | "depends on arguments">();
    }
    if (described.kind === "snippet") expectTypeOf(described.connectors).toEqualTypeOf<string[]>();
    if (described.error !== undefined) expectTypeOf(described.kind).toBeUndefined();
  });
});
