// @codemode/bullmq: a worker fleet for Code Mode on BullMQ 6 (Redis or PostgreSQL). See docs/fleet.md.
export { createCodemodeQueue, type CodemodeQueue, type CodemodeQueueOptions, type QueueRuntime } from "./create-queue.js";
export { createCodemodeWorker, CodemodeWorker, type CodemodeWorkerOptions } from "./create-worker.js";
export type { CodemodeQueueConnection, NodeRedisClient } from "./connection.js";
export type { CodemodeEventMap, CodemodeEventName, CodemodeEvents } from "./lifecycle-events.js";
export type { WaitForOutcomeOptions } from "./wait-for-outcome.js";
export { runJob, type WorkerRuntime } from "./run-job.js";
export {
  approveJobId,
  DEFAULT_QUEUE_NAME,
  executionIdOfJob,
  RETRY_CODES,
  RetryableOutcomeError,
  runJobId,
  type CodemodeJobData,
  type CodemodeJobName,
  type CodemodeJobResult,
  type PendingCall,
  type RetryOptions,
} from "./jobs.js";
