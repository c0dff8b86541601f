import { expect, it } from "vitest";
import { ALL, row, T0 } from "./index-fixtures.js";
import type { IndexSuite } from "./index-suite.js";

/** Moves between statuses, with counts that follow, and put and remove that are idempotent. */
export function indexMoveStories(suite: IndexSuite): void {
  const { cannotRun, fresh } = suite;

  it("a move lists the execution under its new status only, with the new updatedAt; counts follow", async () => {
    if (cannotRun()) return;
    const index = await fresh();
    const other = row("other", "running", T0, T0);
    await index.put(other);
    const started = row("run", "running", T0 + 1, T0 + 1);
    await index.put(started);
    expect(await index.count(["running"])).toBe(2);

    await index.put({ ...started, status: "paused", updatedAt: T0 + 50 }, "running");
    expect(await index.list({ limit: 10, statuses: ["running"] })).toEqual([other]);
    expect(await index.list({ limit: 10, statuses: ["paused"] })).toEqual([
      { ...started, status: "paused", updatedAt: T0 + 50 },
    ]);
    expect(await index.count(["running"])).toBe(1);
    expect(await index.count(["paused"])).toBe(1);

    await index.put({ ...started, status: "completed", updatedAt: T0 + 90 }, "paused");
    expect(await index.list({ limit: 10 })).toEqual([{ ...started, status: "completed", updatedAt: T0 + 90 }, other]);
    expect(await index.count(["running", "paused", "completed"])).toBe(2);
    expect(await index.count(["paused"])).toBe(0);
  });

  it("put and remove are idempotent, and harmless for rows that are not there", async () => {
    if (cannotRun()) return;
    const index = await fresh();
    const paused = row("twice", "paused", T0, T0 + 1);
    await index.put(paused);
    await index.put(paused);
    await index.put(paused, "paused");
    expect(await index.list({ limit: 10 })).toEqual([paused]);
    // A previous status it was never listed under.
    const fresh2 = row("new", "running", T0 + 1, T0 + 1);
    await index.put(fresh2, "error");
    expect(await index.list({ limit: 10 })).toEqual([fresh2, paused]);
    expect(await index.count(["error"])).toBe(0);

    await index.remove(paused);
    await index.remove(paused);
    await index.remove(row("never", "completed", T0, T0));
    expect(await index.list({ limit: 10 })).toEqual([fresh2]);
    await index.remove(fresh2);
    expect(await index.list({ limit: 10 })).toEqual([]);
    expect(await index.count([...ALL])).toBe(0);
    await index.put(paused);
    expect(await index.list({ limit: 10 })).toEqual([paused]);
  });
}
