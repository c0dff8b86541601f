// @codemode/storage/sqlite: `node:sqlite`, built into Node.js 24 (no driver to install).
export { sqliteStorage, type SqliteStorageOptions } from "./sqlite-storage.js";
export { createSqliteLock } from "./sqlite-lock.js";
export { createSqliteExecutionIndex } from "./sqlite-execution-index.js";
export { NodeSqliteStore } from "./node-sqlite-store.js";
export type { CodemodeStorage } from "../storage.js";
