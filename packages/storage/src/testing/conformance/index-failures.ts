import { expect, it } from "vitest";
import { row, runtimeName, T0 } from "./index-fixtures.js";
import type { IndexSuite } from "./index-suite.js";

/** A backend that fails makes every call reject: never an empty page or a zero that reads as "nothing there". */
export function indexFailureStories(suite: IndexSuite): void {
  it("a backend that fails rejects put, remove, list and count — never an empty page or a zero", async () => {
    if (suite.cannotRun()) return;
    const opened = await suite.open();
    const index = opened.index.forRuntime(runtimeName());
    const listed = row("before", "paused", T0, T0);
    await index.put(listed);
    expect(await index.list({ limit: 10 })).toEqual([listed]);
    await suite.breakIndex(opened);
    await expect(index.list({ limit: 10 })).rejects.toThrow();
    await expect(
      index.list({ limit: 10, statuses: ["paused"], order: "oldest", after: { createdAt: T0 + 1, id: "x" } }),
    ).rejects.toThrow();
    await expect(index.count(["paused"])).rejects.toThrow();
    await expect(index.put({ ...listed, status: "completed" }, "paused")).rejects.toThrow();
    await expect(index.remove(listed)).rejects.toThrow();
  });
}
