import type { ExecutionIndex, ExecutionIndexProvider, IndexRow, LeaseFence } from "@codemode/core/store";
import { checkRow, checkRuntimeName, checkStatus, type PageQuery, pageQuery } from "./index-rows.js";

/** A store's side of an execution index: what it does with requests once `checkedIndexProvider` has checked them. */
export interface IndexStore {
  /** Lists `row` under its status, out of wherever the execution was listed; with `fence`, as its lease's holder. */
  put(runtimeName: string, row: IndexRow, fence: LeaseFence | undefined): Promise<void>;
  /** Removes the execution's row, only while it is listed under `row.status`. */
  remove(runtimeName: string, row: Pick<IndexRow, "id" | "status" | "createdAt">): Promise<void>;
  /** One page of the listing, the query's defaults filled in. */
  list(runtimeName: string, page: PageQuery): Promise<IndexRow[]>;
  /** How many rows are listed under `statuses` (known statuses, possibly repeated, possibly none). */
  count(runtimeName: string, statuses: readonly IndexRow["status"][]): Promise<number>;
}

/**
 * The `ExecutionIndexProvider` of a store: every runtime name, row, query and status is checked
 * here, the same way for every store, before the store sees it (they become parts of keys and
 * statements).
 *
 * @example
 * const provider = checkedIndexProvider({ put, remove, list, count });
 * await provider.forRuntime("default").list({ statuses: ["paused"], limit: 20 });
 */
export function checkedIndexProvider(store: IndexStore): ExecutionIndexProvider {
  return {
    forRuntime(runtimeName): ExecutionIndex {
      checkRuntimeName(runtimeName);
      return {
        async put(row, _previous, fence) {
          checkRow(row);
          await store.put(runtimeName, row, fence);
        },
        async remove(row) {
          checkRow(row);
          await store.remove(runtimeName, row);
        },
        async list(query) {
          return store.list(runtimeName, pageQuery(query));
        },
        async count(statuses) {
          for (const status of statuses) checkStatus(status);
          return store.count(runtimeName, statuses);
        },
      };
    },
  };
}
