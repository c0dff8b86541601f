// @codemode/storage/redis: needs `@keyv/redis` (which brings the node-redis client).

export type { CodemodeStorage } from "../storage.js";
export { createRedisExecutionIndex, type RedisIndexClient } from "./redis-execution-index.js";
export { createRedisLock, type RedisLockClient } from "./redis-lock.js";
export { type RedisClient, type RedisStorageOptions, redisStorage } from "./redis-storage.js";
