import { compareRows } from "@codemode/core/store";
import { expect, it } from "vitest";
import { row, runtimeName, T0, walk } from "./index-fixtures.js";
import type { IndexSuite } from "./index-suite.js";

/** Two indexes on one backend (two processes, a restart) see one listing, and concurrent moves keep it whole. */
export function indexSharingStories(suite: IndexSuite): void {
  const { cannotRun, open, shared } = suite;

  if (shared) {
    it("a second index opened on the same backend (another process, a restart) sees the same listing and moves it", async () => {
      if (cannotRun()) return;
      const name = runtimeName();
      const first = (await open()).index.forRuntime(name);
      const second = (await open()).index.forRuntime(name);
      const paused = row("shared", "paused", T0, T0);
      await first.put(paused);
      expect(await second.list({ limit: 10, statuses: ["paused"] })).toEqual([paused]);
      await second.put({ ...paused, status: "completed", updatedAt: T0 + 5 }, "paused");
      expect(await first.list({ limit: 10 })).toEqual([{ ...paused, status: "completed", updatedAt: T0 + 5 }]);
    });
  }

  it("50 concurrent moves: every execution ends listed once, under its last status", async () => {
    if (cannotRun()) return;
    const name = runtimeName();
    const first = (await open()).index.forRuntime(name);
    const second = shared ? (await open()).index.forRuntime(name) : first;
    const rows = Array.from({ length: 50 }, (_, at) => row(`c-${at}`, "running", T0 + (at % 7), T0));
    await Promise.all(rows.map((each, at) => (at % 2 ? second : first).put(each)));
    await Promise.all(
      rows.map((each, at) =>
        (at % 2 ? first : second).put({ ...each, status: "paused", updatedAt: T0 + 1 }, "running"),
      ),
    );
    const ended = rows.map((each, at) => ({
      ...each,
      status: at % 5 === 0 ? ("error" as const) : ("completed" as const),
      updatedAt: T0 + 2,
    }));
    await Promise.all(ended.map((each, at) => (at % 3 ? first : second).put(each, "paused")));
    expect(await first.count(["running", "paused"])).toBe(0);
    expect(await second.count(["completed"])).toBe(40);
    expect(await second.count(["error"])).toBe(10);
    expect(await walk(first, { limit: 7, order: "oldest" })).toEqual([...ended].sort(compareRows));
  });
}
