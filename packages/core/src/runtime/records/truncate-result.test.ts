import { describe, expect, it } from "vitest";
import { createCodemodeRuntime, defineConnector } from "../../index.js";
import { truncateResult } from "./truncate-result.js";

const size = (value: unknown) => JSON.stringify(value).length;

describe("truncateResult (R-DV-3)", () => {
  it("returns a value that already fits unchanged", () => {
    const value = { items: [1, 2, 3], note: "short" };
    expect(truncateResult(value, { maxChars: 1_000 })).toBe(value);
  });

  it("cuts long strings with a note of how much was cut, keeping valid JSON of the same shape", () => {
    const value = { title: "t", body: "x".repeat(50_000), tags: ["a", "b"] };
    const truncated = truncateResult(value, { maxChars: 2_000 }) as typeof value;
    expect(size(truncated)).toBeLessThanOrEqual(2_000);
    expect(Object.keys(truncated)).toEqual(["title", "body", "tags"]);
    expect(truncated.title).toBe("t");
    expect(truncated.body).toMatch(/^x+… \[\d+ more characters\]$/);
    expect(Array.isArray(truncated.tags)).toBe(true);
    expect(() => JSON.parse(JSON.stringify(truncated))).not.toThrow();
  });

  it("keeps the first items of long arrays and the shape of each item", () => {
    const rows = Array.from({ length: 5_000 }, (_, index) => ({
      id: index,
      name: `row ${index}`,
      payload: "p".repeat(100),
    }));
    const truncated = truncateResult({ rows, total: rows.length }, { maxChars: 4_000 }) as {
      rows: Array<{ id: number; name: string }>;
      total: number;
    };
    expect(size(truncated)).toBeLessThanOrEqual(4_000);
    expect(truncated.total).toBe(5_000);
    expect(truncated.rows.length).toBeGreaterThan(0);
    expect(truncated.rows.length).toBeLessThan(5_000);
    expect(truncated.rows[0]).toMatchObject({ id: 0, name: "row 0" });
  });

  it("as transformResult: the model gets the truncated value, the record keeps the raw one", async () => {
    const big = defineConnector({ name: "files", tools: { read: { execute: async () => "line\n".repeat(20_000) } } });
    const runtime = createCodemodeRuntime({
      connectors: [big],
      transformResult: (result) => truncateResult(result, { maxChars: 500 }),
    });
    const outcome = await runtime.execute({ code: "async () => ({ text: await files.read({}) })" });
    expect(outcome.status).toBe("completed");
    if (outcome.status !== "completed") return;
    expect(size(outcome.result)).toBeLessThanOrEqual(500);
    const record = await runtime.execution(outcome.executionId);
    expect((record!.result as { text: string }).text.length).toBe(100_000);
    await runtime.close();
  });
});
