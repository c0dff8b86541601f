import type { ExecutionIndex } from "./execution-index.js";
import { asStorageError } from "./storage-error.js";

/**
 * The listing as the runtime uses it: every failure of the store's own index (a driver's
 * `ECONNRESET`, a database restarting) rejects with `CodemodeError` STORAGE_ERROR (R-RT-3), so
 * no operation reports an outage of the listing as a failure of the sandbox.
 */
export function storageErrorsOf(index: ExecutionIndex): ExecutionIndex {
  const guarded =
    <A extends unknown[], R>(what: string, call: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      try {
        return await call(...args);
      } catch (error) {
        throw asStorageError(what, error);
      }
    };
  return {
    put: guarded("could not write the listing", (row, previous, fence) => index.put(row, previous, fence)),
    remove: guarded("could not remove a listing row", (row) => index.remove(row)),
    list: guarded("could not read the listing", (query) => index.list(query)),
    count: guarded("could not count the listing", (statuses) => index.count(statuses)),
  };
}
