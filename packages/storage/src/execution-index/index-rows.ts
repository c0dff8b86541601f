import { compareRows, type IndexRow } from "@codemode/core/store";

// The checks of rows and queries are core's (the generic index uses the same ones): a native index
// refuses exactly what the generic one refuses.
export {
  type CheckedIndexQuery as PageQuery,
  checkIndexQuery as pageQuery,
  checkIndexRow as checkRow,
  checkIndexStatus as checkStatus,
} from "@codemode/core/store";

/**
 * One page out of the pages read per status (each already in `order` and at most `limit` long):
 * merged, in order, cut to `limit`. Costs O(statuses × limit).
 */
export function mergePages(pages: readonly IndexRow[][], order: "newest" | "oldest", limit: number): IndexRow[] {
  const rows = pages.flat();
  rows.sort(order === "newest" ? (a, b) => compareRows(b, a) : compareRows);
  return rows.slice(0, limit);
}

/** Runtime names become part of keys; the runtime allows the same characters. */
export function checkRuntimeName(runtimeName: string): string {
  if (typeof runtimeName !== "string" || !/^[\w.-]{1,64}$/.test(runtimeName)) {
    throw new TypeError(
      `runtime name must be 1–64 letters, digits, "_", "-" or "." (got ${JSON.stringify(runtimeName)})`,
    );
  }
  return runtimeName;
}
