import type { ExecutionIndex, IndexQuery, IndexRow } from "@codemode/core/store";
import { expect } from "vitest";
import { uniqueName } from "../story-helpers.js";

/** A fixed time the stories' rows are made around. */
export const T0 = 1_700_000_000_000;
export const ALL = ["running", "paused", "completed", "error", "rejected", "rolled_back"] as const;

export function row(id: string, status: IndexRow["status"], createdAt: number, updatedAt: number): IndexRow {
  return { id, status, createdAt, updatedAt };
}

export function cursorOf(last: IndexRow): { createdAt: number; id: string } {
  return { createdAt: last.createdAt, id: last.id };
}

/** Every row of a query, read page by page with the last row of each page as the next cursor. */
export async function walk(index: ExecutionIndex, query: IndexQuery): Promise<IndexRow[]> {
  const rows: IndexRow[] = [];
  for (let pages = 0; pages < 1_000; pages++) {
    const page = await index.list({ ...query, after: rows.length > 0 ? cursorOf(rows.at(-1)!) : undefined });
    expect(page.length).toBeLessThanOrEqual(query.limit);
    rows.push(...page);
    if (page.length < query.limit) return rows;
  }
  throw new Error("the listing did not end after 1,000 pages");
}

/** A runtime name no other story uses. */
export function runtimeName(): string {
  return uniqueName("ix");
}
