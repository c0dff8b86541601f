// @codemode/core/store: what a store author needs — the Keyv subset the runtime uses, leases,
// and the execution listing a store may implement natively.
export type { KeyvLike } from "./execution-store.js";
export { createInProcessLock, type Lease, type LeaseFence, type LockProvider } from "./lock.js";
export {
  ALL_STATUSES,
  compareRows,
  TERMINAL_STATUSES,
  type ExecutionIndex,
  type ExecutionIndexProvider,
  type IndexQuery,
  type IndexRow,
} from "./execution-index.js";
export { createKeyvExecutionIndex } from "./kv-execution-index.js";
