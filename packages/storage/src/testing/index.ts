export { countingKeyv, countingLock, type KeyvCounts } from "./counting-keyv.js";
export { type CuttableProxy, cuttableProxy } from "./cuttable-proxy.js";
export {
  type IndexConformanceOptions,
  type IndexUnderTest,
  runExecutionIndexConformance,
} from "./run-index-conformance.js";
export {
  runStorageConformance,
  type StorageConformanceOptions,
  type StorageUnderTest,
} from "./run-storage-conformance.js";
export { tcpUnreachable } from "./tcp-unreachable.js";
