import { describe, expect, it } from "vitest";
import type { Outcome } from "../outcome.js";
import { createOutcomeMemo } from "./outcome-memo.js";

const completed = (executionId: string): Outcome => ({ status: "completed", executionId, result: null });

describe("createOutcomeMemo", () => {
  it("starts a run once per key and hands the same outcome to the one who takes it", async () => {
    const memo = createOutcomeMemo();
    let starts = 0;
    const start = async () => {
      starts += 1;
      return completed(`e${starts}`);
    };
    const [first, again] = await Promise.all([memo.run("call-1", start), memo.run("call-1", start)]);
    expect(starts).toBe(1);
    expect(again).toBe(first);
    expect(await memo.take("call-1")).toBe(first);
    expect(memo.take("call-1")).toBeUndefined();
  });

  it("keeps at most maxEntries, dropping the oldest", async () => {
    const memo = createOutcomeMemo({ maxEntries: 2 });
    for (const key of ["a", "b", "c"]) await memo.run(key, async () => completed(key));
    expect(memo.take("a")).toBeUndefined();
    expect(await memo.take("c")).toMatchObject({ executionId: "c" });
  });
});
