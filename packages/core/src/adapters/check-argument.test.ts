import { describe, expect, it } from "vitest";
import {
  checkArgument,
  checkOptions,
  describeValue,
  HINTS,
  MODEL_OUTPUT,
  OUTCOME,
  runtimeWith,
} from "./check-argument.js";

describe("the argument checks the adapters share", () => {
  it("names the call, the argument's path and what was expected", () => {
    expect(() => checkArgument("f(options)", "options", { github: 7 }, HINTS)).toThrow(
      /^f\(options\): options\.github must be a string; got number 7\.$/,
    );
    expect(() =>
      checkOptions("f(options)", { modelOutput: { maxLogLines: -1 } }, { modelOutput: MODEL_OUTPUT }),
    ).toThrow("f(options): options.modelOutput.maxLogLines must be a number ≥ 0; got number -1.");
  });

  it("accepts what is right, and absent options", () => {
    expect(() => checkOptions("f(options)", undefined, { modelOutput: MODEL_OUTPUT })).not.toThrow();
    expect(() => checkArgument("f(o)", "o", { status: "completed", executionId: "e" }, OUTCOME)).not.toThrow();
    expect(() => checkArgument("f(r)", "r", { execute() {} }, runtimeWith("execute"))).not.toThrow();
  });

  it("describes what it was given without printing it whole", () => {
    expect(describeValue(Promise.resolve())).toBe("a promise (await it first)");
    expect(describeValue("x".repeat(100))).toBe(`the string "${"x".repeat(40)}…"`);
    expect(describeValue({ a: 1, b: 2, c: 3, d: 4, e: 5, f: 6, g: 7 })).toBe("an object { a, b, c, d, e, f, … }");
    expect(describeValue([1, 2])).toBe("an array of 2");
    expect(describeValue(function named() {})).toBe("the function named");
    expect(() => checkArgument("f(r)", "r", {}, runtimeWith("execute", "approve"))).toThrow(
      "f(r): r must be a CodemodeRuntime from createCodemodeRuntime (with execute, approve); got an empty object.",
    );
  });
});
