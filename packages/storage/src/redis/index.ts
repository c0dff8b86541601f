// @codemode/storage/redis: needs `@keyv/redis` (which brings the node-redis client).
export { redisStorage, type RedisClient, type RedisStorageOptions } from "./redis-storage.js";
export { createRedisLock, type RedisLockClient } from "./redis-lock.js";
export { createRedisExecutionIndex, type RedisIndexClient } from "./redis-execution-index.js";
export type { CodemodeStorage } from "../storage.js";
