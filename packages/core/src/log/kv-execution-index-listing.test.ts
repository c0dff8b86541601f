import Keyv from "keyv";
import { describe, expect, it } from "vitest";
import type { ExecutionStatus } from "../outcome.js";
import { ALL_STATUSES, type ExecutionIndex, type IndexQuery, type IndexRow } from "./execution-index.js";
import { BASE, expectedPage, HOUR, putAll } from "./execution-index-fixtures.js";
import { createKeyvExecutionIndex } from "./kv-execution-index.js";
import { createInProcessLock } from "./lock.js";

const DAY = 24 * HOUR;

/** A seeded generator, so a failing listing can be replayed. */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let value = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    value = (value + Math.imul(value ^ (value >>> 7), 61 | value)) ^ value;
    return ((value ^ (value >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/**
 * Rows over six hours, a tenth of them over a hundred days; every fifth shares its neighbour's
 * millisecond, and some sit on the first or last millisecond of a minute, where pages meet.
 */
function spreadRows(count: number, seed: number): IndexRow[] {
  const next = random(seed);
  const rows: IndexRow[] = [];
  for (let index = 0; index < count; index++) {
    const spread = next() < 0.1 ? 100 * DAY : 6 * HOUR;
    let createdAt = index % 5 === 4 ? rows[index - 1]!.createdAt : BASE + Math.floor(next() * spread);
    if (index % 7 === 0) createdAt -= createdAt % 60_000;
    if (index % 11 === 0) createdAt -= (createdAt % 60_000) + 1;
    const status = ALL_STATUSES[Math.floor(next() * ALL_STATUSES.length)]!;
    rows.push({
      id: `exec-${index.toString(36)}-${Math.floor(next() * 1e6)}`,
      status,
      createdAt,
      updatedAt: createdAt + 5,
    });
  }
  return rows;
}

/** Follows the cursor page by page, checking each page against the expected one; answers every row seen. */
async function pageThrough(
  index: ExecutionIndex,
  rows: IndexRow[],
  query: Omit<IndexQuery, "after">,
): Promise<IndexRow[]> {
  const seen: IndexRow[] = [];
  let after: IndexQuery["after"];
  for (;;) {
    const page = await index.list({ ...query, after });
    expect(page).toEqual(expectedPage(rows, { ...query, after }));
    seen.push(...page);
    if (page.length < query.limit) return seen;
    after = { createdAt: page.at(-1)!.createdAt, id: page.at(-1)!.id };
  }
}

describe("createKeyvExecutionIndex: listing", () => {
  const rows = spreadRows(500, 7);
  const setUp = async () => {
    const index = createKeyvExecutionIndex(new Keyv(), "default", createInProcessLock());
    await putAll(index, rows);
    return index;
  };

  it("pages through 500 rows over a hundred days, newest first and oldest first, each page exactly after its cursor", async () => {
    const index = await setUp();
    const newest = await pageThrough(index, rows, { limit: 37 });
    expect(newest).toHaveLength(500);
    const oldest = await pageThrough(index, rows, { limit: 50, order: "oldest" });
    expect(oldest).toEqual([...newest].reverse());
    // Rows sharing a millisecond are split across pages by id, none lost or repeated.
    expect(await pageThrough(index, rows, { limit: 1, order: "oldest" })).toEqual(oldest);
  });

  it("filters by one status, several, or all, and counts what it lists", async () => {
    const index = await setUp();
    for (const statuses of [["paused"], ["completed", "error", "rolled_back"], ALL_STATUSES] as ExecutionStatus[][]) {
      const listed = await pageThrough(index, rows, { statuses, limit: 23, order: "oldest" });
      expect(listed.length).toBe(rows.filter((row) => statuses.includes(row.status)).length);
      expect(await index.count(statuses)).toBe(listed.length);
    }
    expect(await index.count([])).toBe(0);
    expect(await index.list({ statuses: [], limit: 10 })).toEqual([]);
    expect(await index.list({ limit: 0 })).toEqual([]);
  });

  it("a page after a cursor that was removed still starts right after it", async () => {
    const index = await setUp();
    const cursor = expectedPage(rows, { limit: 100 }).at(-1)!;
    await index.remove(cursor);
    const remaining = rows.filter((row) => row.id !== cursor.id);
    expect(await index.list({ limit: 30, after: cursor })).toEqual(
      expectedPage(remaining, { limit: 30, after: cursor }),
    );
    expect(await index.list({ limit: 30, after: cursor, order: "oldest" })).toEqual(
      expectedPage(remaining, { limit: 30, after: cursor, order: "oldest" }),
    );
  });
});
