// @codemode/storage/sqlite: `node:sqlite`, built into Node.js 24 (no driver to install).

export type { CodemodeStorage } from "../storage.js";
export { NodeSqliteStore } from "./node-sqlite-store.js";
export { createSqliteExecutionIndex } from "./sqlite-execution-index.js";
export { createSqliteLock } from "./sqlite-lock.js";
export { type SqliteStorageOptions, sqliteStorage } from "./sqlite-storage.js";
