// The queue and the worker on a real BullMQ backend — Redis, then PostgreSQL (BullMQ's own
// backend) — with the runs in an in-process store. A story is skipped with a printed reason when
// its server is down, and fails when `CI` is set.
import { randomUUID } from "node:crypto";
import type { CodemodeRuntime, Outcome } from "@codemode/core";
import { tcpUnreachable } from "@codemode/storage/testing";
import { afterEach, beforeAll, describe } from "vitest";
import type { CodemodeQueueConnection } from "../connection.js";
import { type CodemodeQueue, createCodemodeQueue } from "../create-queue.js";
import { type CodemodeWorker, type CodemodeWorkerOptions, createCodemodeWorker } from "../create-worker.js";
import type { RetryOptions } from "../jobs.js";
import type { WorkerRuntime } from "../run-job.js";

export const REDIS_URL = process.env.CODEMODE_REDIS_URL ?? "redis://127.0.0.1:6379";
export const POSTGRES_URL = process.env.CODEMODE_POSTGRES_URL ?? "postgresql://postgres@127.0.0.1:5432/test";

export interface Backend {
  name: string;
  url: string;
  connection(): CodemodeQueueConnection;
}

const backends: Backend[] = [
  { name: "Redis", url: REDIS_URL, connection: () => ({ redis: REDIS_URL }) },
  {
    name: "PostgreSQL",
    url: POSTGRES_URL,
    connection: () => ({ postgres: { connectionString: POSTGRES_URL, max: 4 } }),
  },
];

/** What the stories of one backend get. */
export interface BackendStories {
  backend: Backend;
  /** True, with a printed reason, when the backend is down: the story returns at once. */
  skip(): boolean;
  /** A fleet in one process: a queue, and workers started on demand, on a queue name of its own. */
  fleet(
    runtime: CodemodeRuntime,
    retry?: RetryOptions,
  ): {
    queue: CodemodeQueue;
    startWorker(workerRuntime?: WorkerRuntime, options?: Partial<CodemodeWorkerOptions>): CodemodeWorker;
  };
  /** Another queue of `queue`'s fleet, as another web process opens it; closed after the story. */
  queueBeside(runtime: CodemodeRuntime, queue: CodemodeQueue): CodemodeQueue;
  /** Closes `thing` after the story, before the workers and the fleet's queue. */
  closeAfterTest(thing: { close(): Promise<void> }): void;
}

/**
 * Declares `stories` once per backend, in a `describe` named `@codemode/bullmq on <backend>`;
 * everything a story opens is closed after it, newest first.
 */
export function describeOnEachBackend(stories: (context: BackendStories) => void): void {
  for (const backend of backends) {
    describe(`@codemode/bullmq on ${backend.name}`, () => {
      let unavailable: string | undefined;
      const opened: Array<{ close(): Promise<void> }> = [];
      beforeAll(async () => {
        unavailable = await tcpUnreachable(backend.url);
        if (unavailable && process.env.CI)
          throw new Error(`${backend.name} is not reachable (${unavailable}); CI must provide it`);
      });
      afterEach(async () => {
        for (const thing of opened.splice(0).reverse()) await thing.close();
      });
      const skip = () => {
        if (unavailable) console.warn(`story not run: ${backend.name} is not reachable (${unavailable})`);
        return unavailable !== undefined;
      };
      const fleet = (runtime: CodemodeRuntime, retry: RetryOptions = {}) => {
        const name = `cm-test-${randomUUID().slice(0, 8)}`;
        const queue = createCodemodeQueue({
          runtime,
          connection: backend.connection(),
          name,
          retry: { delayMs: 20, ...retry },
          logger: { warn() {} },
        });
        opened.push({
          async close() {
            await queue.bullmq.obliterate({ force: true }).catch(() => undefined);
            await queue.close();
            await runtime.close();
          },
        });
        const startWorker = (workerRuntime: WorkerRuntime = runtime, options: Partial<CodemodeWorkerOptions> = {}) => {
          const worker = createCodemodeWorker({
            runtime: workerRuntime,
            connection: backend.connection(),
            name,
            concurrency: 2,
            lockDurationMs: 2_000,
            stalledIntervalMs: 1_000,
            logger: { warn() {} },
            ...options,
          });
          // Workers close after what the story opened itself, and before the queue they serve.
          opened.splice(1, 0, worker);
          return worker;
        };
        return { queue, startWorker };
      };
      const queueBeside = (runtime: CodemodeRuntime, queue: CodemodeQueue) => {
        const beside = createCodemodeQueue({
          runtime,
          connection: backend.connection(),
          name: queue.bullmq.name,
          logger: { warn() {} },
        });
        opened.push(beside);
        return beside;
      };
      stories({ backend, skip, fleet, queueBeside, closeAfterTest: (thing) => void opened.push(thing) });
    });
  }
}

/** Submits `code` and returns its execution id; a refused submission fails the story. */
export async function submit(queue: CodemodeQueue, code: string): Promise<string> {
  const submitted = await queue.submit({ code });
  if ("status" in submitted) throw new Error(`submit failed: ${submitted.error}`);
  return submitted.executionId;
}

/**
 * A worker runtime whose `recover` answers STORAGE_ERROR and whose `approve` answers BUSY while
 * their count in `failures` lasts, then hands on to `runtime`. Raise a count to start another outage.
 */
export function flakyRuntime(runtime: WorkerRuntime, failures: { recover: number; approve: number }): WorkerRuntime {
  return {
    outcome: (id) => runtime.outcome(id),
    execution: (id) => runtime.execution(id),
    executions: (query) => runtime.executions(query),
    rerun: (query) => runtime.rerun(query),
    recover: async (options) =>
      failures.recover-- > 0
        ? [
            {
              status: "error",
              executionId: options?.executionId ?? "",
              code: "STORAGE_ERROR",
              error: "connection reset",
            } satisfies Outcome,
          ]
        : runtime.recover(options),
    approve: async (input) =>
      failures.approve-- > 0
        ? { status: "error", executionId: input.executionId, code: "BUSY", error: "held" }
        : runtime.approve(input),
  };
}
