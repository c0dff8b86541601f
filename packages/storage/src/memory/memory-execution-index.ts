import { compareRows, type ExecutionIndexProvider, type IndexRow } from "@codemode/core/store";
import { checkedIndexProvider } from "../execution-index/checked-index.js";
import { mergePages } from "../execution-index/index-rows.js";

type Status = IndexRow["status"];

/** The listing of one runtime name: each execution's row, and per status the rows in (createdAt, id) order. */
interface Listing {
  rows: Map<string, IndexRow>;
  byStatus: Map<Status, IndexRow[]>;
}

/**
 * The execution index in this process's memory: per runtime name, a sorted array per status
 * (binary search to insert, remove and start a page) and a map from id to row. An execution has
 * one row; a move takes it out of wherever it is listed, whatever `previous` says. After
 * `close()` every call rejects, as a closed connection would.
 *
 * @example
 * const provider = createMemoryExecutionIndex();
 * const index = provider.forRuntime("default");
 * await index.put({ id: "a", status: "running", createdAt: 1, updatedAt: 1 });
 */
export function createMemoryExecutionIndex(): ExecutionIndexProvider & { close(): void } {
  const listings = new Map<string, Listing>();
  let closed = false;
  const listing = (runtimeName: string): Listing => {
    if (closed) throw new Error("the memory storage is closed");
    let found = listings.get(runtimeName);
    if (!found) {
      found = { rows: new Map(), byStatus: new Map() };
      listings.set(runtimeName, found);
    }
    return found;
  };
  const sorted = (target: Listing, status: Status): IndexRow[] => {
    let rows = target.byStatus.get(status);
    if (!rows) {
      rows = [];
      target.byStatus.set(status, rows);
    }
    return rows;
  };
  const unlist = (target: Listing, row: IndexRow): void => {
    const rows = sorted(target, row.status);
    const at = lowerBound(rows, row);
    if (rows[at]?.id === row.id) rows.splice(at, 1);
    target.rows.delete(row.id);
  };

  return {
    close() {
      closed = true;
      listings.clear();
    },
    ...checkedIndexProvider({
      async put(runtimeName, row) {
        const target = listing(runtimeName);
        const existing = target.rows.get(row.id);
        if (existing) unlist(target, existing);
        const stored = { id: row.id, status: row.status, createdAt: row.createdAt, updatedAt: row.updatedAt };
        const rows = sorted(target, stored.status);
        rows.splice(lowerBound(rows, stored), 0, stored);
        target.rows.set(stored.id, stored);
      },
      async remove(runtimeName, row) {
        const target = listing(runtimeName);
        const existing = target.rows.get(row.id);
        // Only the row listed under the status the caller saw: a row that moved since stays.
        if (existing?.status === row.status) unlist(target, existing);
      },
      async list(runtimeName, page) {
        const target = listing(runtimeName);
        const pages = page.statuses.map((status) => {
          const rows = target.byStatus.get(status) ?? [];
          if (page.order === "newest") {
            const end = page.after ? lowerBound(rows, page.after) : rows.length;
            return rows.slice(Math.max(0, end - page.limit), end).reverse();
          }
          const start = page.after ? upperBound(rows, page.after) : 0;
          return rows.slice(start, start + page.limit);
        });
        return mergePages(pages, page.order, page.limit).map((row) => ({ ...row }));
      },
      async count(runtimeName, statuses) {
        const target = listing(runtimeName);
        let total = 0;
        for (const status of new Set(statuses)) total += target.byStatus.get(status)?.length ?? 0;
        return total;
      },
    }),
  };
}

/** The first position whose row is not older than `key`. */
function lowerBound(rows: readonly IndexRow[], key: { createdAt: number; id: string }): number {
  return firstPosition(rows, (row) => compareRows(row, key) >= 0);
}

/** The first position whose row is newer than `key`. */
function upperBound(rows: readonly IndexRow[], key: { createdAt: number; id: string }): number {
  return firstPosition(rows, (row) => compareRows(row, key) > 0);
}

/** Binary search: the first position of `rows` at which `isPast` holds, given that it holds from there on. */
function firstPosition(rows: readonly IndexRow[], isPast: (row: IndexRow) => boolean): number {
  let low = 0;
  let high = rows.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (isPast(rows[middle]!)) high = middle;
    else low = middle + 1;
  }
  return low;
}
