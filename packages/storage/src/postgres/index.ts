// @codemode/storage/postgres: needs `pg` and `@keyv/postgres`.

export type { CodemodeStorage } from "../storage.js";
export { createPostgresExecutionIndex } from "./postgres-execution-index.js";
export { createPostgresLock, type PostgresQueryable } from "./postgres-lock.js";
export { type PostgresStorageOptions, postgresStorage } from "./postgres-storage.js";
