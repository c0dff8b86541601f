export type { CodemodeStorage, StorageOptions } from "./storage.js";
export { memoryStorage } from "./memory/memory-storage.js";
export { redisStorage, type RedisClient, type RedisStorageOptions } from "./redis/redis-storage.js";
export { createRedisLock, type RedisLockClient } from "./redis/redis-lock.js";
export { postgresStorage, type PostgresStorageOptions } from "./postgres/postgres-storage.js";
export { createPostgresLock, type PostgresQueryable } from "./postgres/postgres-lock.js";
export { sqliteStorage, type SqliteStorageOptions } from "./sqlite/sqlite-storage.js";
export { createSqliteLock } from "./sqlite/sqlite-lock.js";
export { NodeSqliteStore } from "./sqlite/node-sqlite-store.js";
