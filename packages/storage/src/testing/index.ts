export { runStorageConformance, type StorageConformanceOptions, type StorageUnderTest } from "./run-storage-conformance.js";
export { runExecutionIndexConformance, type IndexConformanceOptions, type IndexUnderTest } from "./run-index-conformance.js";
export { countingKeyv, countingLock, type KeyvCounts } from "./counting-keyv.js";
export { tcpUnreachable } from "./tcp-unreachable.js";
export { cuttableProxy, type CuttableProxy } from "./cuttable-proxy.js";
