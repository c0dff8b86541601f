import type { ExecutionIndexProvider, KeyvLike, LockProvider } from "@codemode/core/store";

// What the conformance suites are given: the storage or index under test and the options that
// say what it can do. runStorageConformance and runExecutionIndexConformance export them; the
// suites of each concern read them from here.

/** A storage as the suite sees it: any Keyv instance, a lock, and a way to close it. */
export interface StorageUnderTest {
  keyv: KeyvLike;
  lock: LockProvider;
  /** The store's native listing, if it has one: fenced puts are checked on it. */
  index?: ExecutionIndexProvider;
  close(): Promise<void>;
}

export interface StorageConformanceOptions {
  /**
   * Whether every call of the factory reaches the same data (a server or a file), as two
   * processes would. Turns on the stories that open a second storage. Default true; false for a
   * store that lives in one object's memory.
   */
  shared?: boolean;
  /**
   * Why the backend cannot be reached right now, or undefined when it can. With `CI` set in the
   * environment a reason fails the suite; elsewhere each story prints it and returns early.
   */
  unavailable?: () => Promise<string | undefined> | string | undefined;
  /** Makes the backend fail for this storage, mid-pass or between calls. Default: `storage.close()`. */
  breakStorage?: (storage: StorageUnderTest) => Promise<void>;
  /**
   * Whether the store's leases offer the fenced write (`Lease.setIfHeld`: the lease check and the
   * write in one store operation). Turns on the stories that hold it to that. Default false.
   */
  fenced?: boolean;
  /**
   * Removes a lease from the backend behind its holder's back, as a failover that lost the key
   * or an operator who freed it would: the holder still believes it holds it. `key` is as given
   * to `acquire`. Needed by the fencing story that the holder's own clock cannot catch.
   */
  dropLease?: (storage: StorageUnderTest, key: string) => Promise<void>;
}

/** An execution index as the suite sees it: a provider per runtime name, and a way to close it. A `CodemodeStorage` is one. */
export interface IndexUnderTest {
  index: ExecutionIndexProvider;
  close(): Promise<void>;
}

export interface IndexConformanceOptions {
  /**
   * Whether every call of the factory with the same namespace reaches the same data (a server or
   * a file), as two processes would. Turns on the stories that open a second index. Default true;
   * false for an index that lives in one object's memory.
   */
  shared?: boolean;
  /**
   * Why the backend cannot be reached right now, or undefined when it can. With `CI` set in the
   * environment a reason fails the suite; elsewhere each story prints it and returns early.
   */
  unavailable?: () => Promise<string | undefined> | string | undefined;
  /** Makes the backend fail for this index (a killed connection, a closed storage). Default: `close()`. */
  breakIndex?: (opened: IndexUnderTest) => Promise<void>;
  /**
   * The two namespaces the factory is called with: every story uses the first, the story about
   * namespaces both. Default ["conformance-one", "conformance-two"].
   */
  namespaces?: readonly [string, string];
}
