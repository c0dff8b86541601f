import type { CodemodeRuntime } from "@codemode/core";
import { errorMessage } from "@codemode/core/adapters";
import {
  type IQueueBackend,
  type Job,
  type JobProgress,
  Queue,
  UnrecoverableError,
  Worker,
  type WorkerOptions,
} from "bullmq";
import { type CodemodeQueueConnection, type OpenedConnection, openConnection } from "./connection.js";
import {
  BACKOFF_TYPE,
  backoffDelay,
  type CodemodeJobData,
  type CodemodeJobName,
  type CodemodeJobResult,
  checkJobData,
  DEFAULT_QUEUE_NAME,
  type RetryOptions,
} from "./jobs.js";
import { runJob, type WorkerRuntime } from "./run-job.js";
import { type SweepSettings, sweepRuns } from "./sweep.js";

export interface CodemodeWorkerOptions {
  /** A runtime over the fleet's store with every connector the runs use; it runs the passes. */
  runtime: WorkerRuntime;
  connection: CodemodeQueueConnection;
  /** The BullMQ queue name, shared by the fleet. Default "codemode". */
  name?: string;
  /** Passes this process runs at once. They mostly wait on tools, so a few per core. Default 4. */
  concurrency?: number;
  /**
   * BullMQ's job lock (ms): a worker that stops renewing it for this long is taken for dead and
   * its jobs go to other workers. Keep it at least the runtime's `leaseMs`, so the run's lease has
   * lapsed when the job arrives elsewhere (otherwise that worker waits it out with BUSY retries).
   * Default 30 000.
   */
  lockDurationMs?: number;
  /** How often this worker looks for jobs whose lock lapsed (ms). Default 30 000. */
  stalledIntervalMs?: number;
  /**
   * How many times a job may be handed over after its worker died before BullMQ fails it.
   * Resuming is safe (the runtime replays), so the default is high: 1 000.
   */
  maxStalledCount?: number;
  /** Any other BullMQ worker option (limiter, metrics, drainDelay, …). */
  bullmq?: Omit<
    WorkerOptions,
    "connection" | "concurrency" | "lockDuration" | "stalledInterval" | "maxStalledCount" | "autorun"
  >;
  /**
   * How often this worker looks for `running` runs that have no job (a submit whose job could not
   * be added while the store restarted, a process that died between storing a run and queueing
   * it) and gives each one (ms; 0: never). Listing them also repairs listing rows an outage left
   * behind. Default 10 000.
   */
  sweepEveryMs?: number;
  /** How long a `running` run must have gone without a change before the sweep gives it a job. Default 30 000. */
  orphanAfterMs?: number;
  /** The retry settings of the jobs the sweep adds (as the queue's `retry`). */
  retry?: RetryOptions;
  /** Start taking jobs at once (waiting for the store as long as it takes). Default true; otherwise call `worker.keepRunning()` (or BullMQ's `worker.run()`). */
  autorun?: boolean;
  /** Where worker errors (connection trouble, a job that threw) are reported. Default `console`. */
  logger?: { warn(message: string): void };
}

/**
 * A BullMQ worker that runs passes. `close()` finishes the passes under way and then stops
 * (graceful: what a deploy should do); `close(true)` stops at once and hands them back — their
 * jobs go to other workers once the lock lapses, and the runs resume from their logs.
 */
export class CodemodeWorker extends Worker<
  CodemodeJobData,
  CodemodeJobResult,
  CodemodeJobName,
  IQueueBackend,
  JobProgress,
  never
> {
  private opened: OpenedConnection | undefined;
  private stopping = false;
  private readiness: Promise<void> | undefined;
  private sweeper:
    | { timer: NodeJS.Timeout; queue: Queue<CodemodeJobData, CodemodeJobResult, CodemodeJobName> }
    | undefined;
  private readonly wakeUps = new Set<() => void>();

  /** @internal Use `createCodemodeWorker`. */
  constructor(
    name: string,
    processor: (job: Job<CodemodeJobData, CodemodeJobResult, CodemodeJobName>) => Promise<CodemodeJobResult>,
    options: WorkerOptions<never>,
    opened: OpenedConnection,
    private readonly warn: (message: string) => void,
  ) {
    super(name, processor as never, options, opened.backend as never);
    this.opened = opened;
  }

  /**
   * How long one wait for jobs may block, in seconds. BullMQ bounds a wait by `drainDelay` only
   * when no job is delayed; with delayed jobs (retries in their backoff) it waits for the first of
   * them, and on PostgreSQL a restart loses the notification of a job added meanwhile, so that a
   * worker idled for seconds after the store came back. On PostgreSQL every wait ends by
   * `drainDelay` (see `createCodemodeWorker`), delayed jobs or not.
   */
  protected override getBlockTimeout(blockUntil: number): number {
    const timeout = super.getBlockTimeout(blockUntil);
    const ceiling = this.opened?.kind === "postgres" ? this.opts.drainDelay : undefined;
    return ceiling !== undefined && timeout > ceiling ? ceiling : timeout;
  }

  /**
   * Resolves once the queue's store answers, waiting for it as long as it takes (never rejecting
   * while the worker is open): a worker started while its store is down waits for it, saying so,
   * instead of ending its process. Rejects only once the worker is closed.
   */
  override waitUntilReady(): Promise<void> {
    // One wait at a time, however many callers (the run loop and the application): one log line each time.
    this.readiness ??= this.waitForStore().finally(() => {
      this.readiness = undefined;
    });
    return this.readiness;
  }

  private async waitForStore(): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await super.waitUntilReady();
        if (attempt > 1) this.warn(`worker of "${this.name}": the store answers again`);
        return;
      } catch (error) {
        if (this.stopping) throw error;
        const delayMs = storeRetryDelay(attempt);
        this.warn(
          `worker of "${this.name}": the store does not answer (${errorMessage(error)}); trying again in ${(delayMs / 1000).toFixed(1)} s`,
        );
        await this.pause_(delayMs);
        if (this.stopping) throw error;
      }
    }
  }

  /**
   * Runs until closed: waits for the store, takes jobs, and when BullMQ's run loop ends on a
   * failure of the store (not a close), waits for the store again and goes on. A driver's error
   * never ends the process: it is reported through `logger` (the worker's "error" event).
   */
  async keepRunning(): Promise<void> {
    for (let attempt = 1; !this.stopping; attempt++) {
      try {
        await this.waitUntilReady();
        if (this.stopping) return;
        await this.run();
        return;
      } catch (error) {
        if (this.stopping) return;
        const delayMs = storeRetryDelay(attempt);
        this.warn(
          `worker of "${this.name}" stopped taking jobs (${errorMessage(error)}); starting again in ${(delayMs / 1000).toFixed(1)} s`,
        );
        await this.pause_(delayMs);
      }
    }
  }

  /**
   * Sweeps every `everyMs` (with jitter, so that workers do not sweep in step) for `running` runs
   * that have no job, and gives each one (sweep.ts). Stops with `close()`.
   */
  startSweeping(
    runtime: Pick<CodemodeRuntime, "executions">,
    opened: OpenedConnection,
    everyMs: number,
    settings: Omit<SweepSettings, "warn">,
  ): void {
    if (this.sweeper || everyMs <= 0) return;
    const queue = new Queue<CodemodeJobData, CodemodeJobResult, CodemodeJobName>(
      this.name,
      opened.options,
      opened.backend as never,
    );
    queue.on("error", () => undefined);
    let sweeping = false;
    const sweep = async () => {
      if (sweeping || this.stopping) return;
      sweeping = true;
      try {
        await sweepRuns(runtime, queue, { ...settings, warn: this.warn });
      } finally {
        sweeping = false;
      }
    };
    const timer = setInterval(() => void sweep(), Math.round(everyMs * (0.75 + Math.random() * 0.5)));
    timer.unref();
    this.sweeper = { timer, queue };
  }

  override async close(force = false): Promise<void> {
    this.stopping = true;
    for (const wake of this.wakeUps) wake();
    if (this.sweeper) {
      clearInterval(this.sweeper.timer);
      await this.sweeper.queue.close().catch(() => undefined);
      this.sweeper = undefined;
    }
    try {
      await super.close(force);
    } finally {
      const opened = this.opened;
      this.opened = undefined;
      await opened?.close();
    }
  }

  /** Waits `ms`, or less when the worker is closed meanwhile. */
  private pause_(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.wakeUps.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      this.wakeUps.add(wake);
    });
  }
}

/** Back-off while the store does not answer: 250 ms, doubling, at most 2 s (so a store back is used within a second or two). */
function storeRetryDelay(attempt: number): number {
  return Math.min(2_000, 250 * 2 ** Math.min(attempt - 1, 4));
}

/**
 * Starts a worker of the fleet. Each job runs `runtime.recover({ executionId })` (a submitted
 * run, or one whose worker died) or `runtime.approve(...)`; STORAGE_ERROR, BUSY and
 * MISSING_CONNECTOR outcomes throw so BullMQ retries with backoff, and every other outcome —
 * the program's own errors too — completes the job.
 *
 * @example
 * const runtime = createCodemodeRuntime({ connectors: [github], storage: redisStorage(url) });
 * const worker = createCodemodeWorker({ runtime, connection: { redis: url } });
 * process.on("SIGTERM", async () => { await worker.close(); await runtime.close(); process.exit(0); });
 */
export function createCodemodeWorker(options: CodemodeWorkerOptions): CodemodeWorker {
  const { runtime } = options;
  const name = options.name ?? DEFAULT_QUEUE_NAME;
  const opened = openConnection(options.connection);
  const processor = async (job: Job<CodemodeJobData, CodemodeJobResult, CodemodeJobName>) => {
    try {
      checkJobData(job.name, job.data);
    } catch (error) {
      // Data that is not ours will not become ours on a retry.
      throw new UnrecoverableError(errorMessage(error));
    }
    return runJob(runtime, job);
  };
  const bullmqOptions = options.bullmq ?? {};
  const warn = (message: string) => (options.logger ?? console).warn(`[codemode/bullmq] ${message}`);
  const worker = new CodemodeWorker(
    name,
    processor,
    {
      ...bullmqOptions,
      ...opened.options,
      // Started below, through keepRunning: it waits for the store, and starts again after it.
      autorun: false,
      // On PostgreSQL a worker waiting for jobs listens for a notification, and a restart of the
      // database loses the ones sent while it came back: the wait then ends only at drainDelay
      // (BullMQ's default 5 s), the fleet idle for that long. 1 s bounds it.
      ...(opened.kind === "postgres" && bullmqOptions.drainDelay === undefined ? { drainDelay: 1 } : {}),
      // A fetch of jobs that meets a refused connection (the store restarting) waits this long
      // before it tries again: BullMQ's 15 s left a worker idle that long after the store was back.
      runRetryDelay: bullmqOptions.runRetryDelay ?? 500,
      concurrency: options.concurrency ?? 4,
      lockDuration: options.lockDurationMs ?? 30_000,
      stalledInterval: options.stalledIntervalMs ?? 30_000,
      maxStalledCount: options.maxStalledCount ?? 1_000,
      settings: {
        ...bullmqOptions.settings,
        backoffStrategy: (
          attemptsMade: number,
          type?: string,
          error?: Error,
          job?: { opts?: { backoff?: unknown } },
        ) => {
          if (type !== BACKOFF_TYPE)
            return bullmqOptions.settings?.backoffStrategy?.(attemptsMade, type, error, job as never) ?? 0;
          const backoff = job?.opts?.backoff as { delay?: number } | undefined;
          return backoffDelay(attemptsMade, backoff?.delay ?? 500);
        },
      },
    },
    opened,
    (message) => warn(message),
  );
  worker.on("error", (error: Error) => warn(`worker of "${name}": ${error.message}`));
  worker.startSweeping(runtime, opened, options.sweepEveryMs ?? 10_000, {
    orphanAfterMs: options.orphanAfterMs ?? 30_000,
    ...(options.retry ? { retry: options.retry } : {}),
  });
  if (options.autorun ?? true) void worker.keepRunning();
  return worker;
}
