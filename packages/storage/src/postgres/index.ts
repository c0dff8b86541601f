// @codemode/storage/postgres: needs `pg` and `@keyv/postgres`.
export { postgresStorage, type PostgresStorageOptions } from "./postgres-storage.js";
export { createPostgresLock, type PostgresQueryable } from "./postgres-lock.js";
export { createPostgresExecutionIndex } from "./postgres-execution-index.js";
export type { CodemodeStorage } from "../storage.js";
