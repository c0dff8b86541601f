// @codemode/core/store: what a store author needs — the Keyv subset the runtime uses, leases,
// and the execution listing a store may implement natively.

export {
  ALL_STATUSES,
  compareRows,
  type ExecutionIndex,
  type ExecutionIndexProvider,
  type IndexQuery,
  type IndexRow,
  TERMINAL_STATUSES,
} from "./execution-index.js";
export {
  checkQuery as checkIndexQuery,
  checkRow as checkIndexRow,
  checkStatus as checkIndexStatus,
  type PageQuery as CheckedIndexQuery,
} from "./index-input.js";
export type { KeyvLike } from "./interface.js";
export { createKeyvExecutionIndex } from "./kv-execution-index.js";
export { createInProcessLock, type Lease, type LeaseFence, type LockProvider } from "./lock.js";
