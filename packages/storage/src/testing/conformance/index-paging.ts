import { compareRows, type IndexRow } from "@codemode/core/store";
import { expect, it } from "vitest";
import { ALL, cursorOf, row, T0, walk } from "./index-fixtures.js";
import type { IndexSuite } from "./index-suite.js";

/** Pages in both orders that start exactly after a cursor, and status filters merged into one order. */
export function indexPagingStories(suite: IndexSuite): void {
  const { cannotRun, fresh } = suite;

  it("pages newest first and oldest first, each page starting exactly after the last, across rows that share a createdAt", async () => {
    if (cannotRun()) return;
    const index = await fresh();
    const times = [1, 1, 1, 1, 2, 2, 3, 0, 0, 1, 4, 2, 3, 3, 0];
    const ids = ["b", "ab", "a", "abc", "B", "a-1", "a1", "z", "y", "ba", "m", "0", "c", "cc", "x"];
    const rows = ids.map((id, at) => row(id, "completed", T0 + times[at]! * 1_000, T0 + 10_000 + at));
    await Promise.all(rows.map((each) => index.put(each)));
    const oldest = [...rows].sort(compareRows);
    const newest = [...oldest].reverse();
    for (const limit of [1, 2, 4, 100]) {
      expect(await walk(index, { limit }), `newest, pages of ${limit}`).toEqual(newest);
      expect(await walk(index, { limit, order: "newest" }), `newest, pages of ${limit}`).toEqual(newest);
      expect(await walk(index, { limit, order: "oldest" }), `oldest, pages of ${limit}`).toEqual(oldest);
    }
    expect(await index.list({ limit: 3 })).toEqual(newest.slice(0, 3));
    expect(await index.list({ limit: 3, order: "oldest", statuses: ["completed"] })).toEqual(oldest.slice(0, 3));
  });

  it("a cursor whose row is gone, or never was, still starts the page exactly after it", async () => {
    if (cannotRun()) return;
    const index = await fresh();
    const rows = ["a", "b", "c", "d", "e", "f"].map((id, at) => row(id, "paused", T0 + (at < 4 ? 0 : 5), T0 + 20));
    for (const each of rows) await index.put(each);
    const firstPage = await index.list({ limit: 2 });
    expect(firstPage.map((each) => each.id)).toEqual(["f", "e"]);
    await index.remove(firstPage[1]!);
    const next = await index.list({ limit: 10, after: cursorOf(firstPage[1]!) });
    expect(next.map((each) => each.id)).toEqual(["d", "c", "b", "a"]);
    // Between "b" and "c" at the same time, and between the two times.
    expect((await index.list({ limit: 10, after: { createdAt: T0, id: "bb" } })).map((each) => each.id)).toEqual([
      "b",
      "a",
    ]);
    expect(
      (await index.list({ limit: 10, order: "oldest", after: { createdAt: T0, id: "bb" } })).map((each) => each.id),
    ).toEqual(["c", "d", "f"]);
    expect(
      (await index.list({ limit: 10, order: "oldest", after: { createdAt: T0 + 1, id: "zzz" } })).map(
        (each) => each.id,
      ),
    ).toEqual(["f"]);
    expect(await index.list({ limit: 10, after: { createdAt: T0 - 1, id: "zzz" } })).toEqual([]);
  });

  it("filters by status, and merges several statuses into one order", async () => {
    if (cannotRun()) return;
    const index = await fresh();
    const rows = Array.from({ length: 24 }, (_, at) =>
      row(`run-${String(at).padStart(2, "0")}`, ALL[at % ALL.length]!, T0 + Math.floor(at / 3), T0 + 100 + at),
    );
    await Promise.all(rows.map((each) => index.put(each)));
    const sorted = [...rows].sort(compareRows);
    const only = (...statuses: IndexRow["status"][]) => sorted.filter((each) => statuses.includes(each.status));
    expect(await index.list({ limit: 100, statuses: ["paused"], order: "oldest" })).toEqual(only("paused"));
    expect(await walk(index, { limit: 3, statuses: ["completed", "error", "rejected"] })).toEqual(
      only("completed", "error", "rejected").reverse(),
    );
    expect(await walk(index, { limit: 5, statuses: ["running", "rolled_back"], order: "oldest" })).toEqual(
      only("running", "rolled_back"),
    );
    expect(await walk(index, { limit: 7 })).toEqual([...sorted].reverse());
    expect(await index.list({ limit: 100, statuses: [...ALL] })).toEqual([...sorted].reverse());
    expect(await index.count(["paused"])).toBe(4);
    expect(await index.count(["completed", "error", "rejected", "rolled_back"])).toBe(16);
    expect(await index.count([...ALL])).toBe(24);
  });
}
