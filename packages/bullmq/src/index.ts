// @codemode/bullmq: a worker fleet for Code Mode on BullMQ 6 (Redis or PostgreSQL). See docs/fleet.md.

export type { CodemodeQueueConnection, NodeRedisClient } from "./connection.js";
export {
  type CodemodeQueue,
  type CodemodeQueueOptions,
  createCodemodeQueue,
  type QueueRuntime,
} from "./create-queue.js";
export { CodemodeWorker, type CodemodeWorkerOptions, createCodemodeWorker } from "./create-worker.js";
export {
  approveJobId,
  type CodemodeJobData,
  type CodemodeJobName,
  type CodemodeJobResult,
  DEFAULT_QUEUE_NAME,
  executionIdOfJob,
  type PendingCall,
  RETRY_CODES,
  RetryableOutcomeError,
  type RetryOptions,
  runJobId,
} from "./jobs.js";
export type { CodemodeEventMap, CodemodeEventName, CodemodeEvents } from "./lifecycle-events.js";
export { runJob, type WorkerRuntime } from "./run-job.js";
export type { WaitForOutcomeOptions } from "./wait-for-outcome.js";
