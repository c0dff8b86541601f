// @codemode/storage/memory: a store in this process's memory (no driver).
export { memoryStorage } from "./memory-storage.js";
export { createMemoryExecutionIndex } from "./memory-execution-index.js";
export type { CodemodeStorage } from "../storage.js";
