// @codemode/storage/memory: a store in this process's memory (no driver).

export type { CodemodeStorage } from "../storage.js";
export { createMemoryExecutionIndex } from "./memory-execution-index.js";
export { memoryStorage } from "./memory-storage.js";
