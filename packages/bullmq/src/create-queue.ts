import {
  CodemodeError,
  type CodemodeRuntime,
  type ErrorOutcome,
  type Outcome,
  type PendingAction,
} from "@codemode/core";
import { errorMessage } from "@codemode/core/adapters";
import type { ApproveInput } from "@codemode/core/operations";
import { Queue } from "bullmq";
import { addJob } from "./add-job.js";
import { type CodemodeQueueConnection, openConnection } from "./connection.js";
import {
  approveJobId,
  type CodemodeJobData,
  type CodemodeJobName,
  type CodemodeJobResult,
  DEFAULT_QUEUE_NAME,
  errorOutcomeOf,
  jobOptions,
  type RetryOptions,
  runJobId,
} from "./jobs.js";
import { type CodemodeEvents, LifecycleEvents } from "./lifecycle-events.js";
import { type WaitForOutcomeOptions, waitForOutcome } from "./wait-for-outcome.js";

/** What a queue needs of the runtime: it stores submissions and decisions and reads outcomes, and never runs a pass. */
export type QueueRuntime = Pick<CodemodeRuntime, "submit" | "reject" | "outcome" | "pending">;

export interface CodemodeQueueOptions {
  /**
   * A runtime over the same store (and runtime `name`) as the workers'. Give it the same
   * connectors, so a submission records which ones its code uses; their tools never run here.
   */
  runtime: QueueRuntime;
  connection: CodemodeQueueConnection;
  /** The BullMQ queue name, shared by the fleet. Default "codemode". */
  name?: string;
  /** Attempts and backoff of the jobs this queue adds (for STORAGE_ERROR, BUSY, MISSING_CONNECTOR). */
  retry?: RetryOptions;
  /** Where connection trouble is reported. Default `console`. */
  logger?: { warn(message: string): void };
}

export interface CodemodeQueue {
  /** Stores the code as a new execution and queues its first pass; returns at once. */
  submit(input: { code: string }): Promise<{ executionId: string } | ErrorOutcome>;
  /**
   * Queues the approval of a pending action (`seq`: any action the run waits on now), or of every
   * action pending now when no `seq` is given, as `runtime.approve` does. Each approved action is
   * its own job, `approve_<executionId>_<seq>`, whose worker runs `runtime.approve` for that seq
   * and the resumed pass; the jobs of one batch take the run's lease in turn, each pass going as
   * far as the actions approved so far allow. One job per action keeps the job ids deduplicating
   * whatever mix of single and whole-batch approvals arrives, and never approves an action that
   * became pending after the approver looked. Answers `{ executionId, seq, seqs }` (`seqs`: every
   * action whose job is queued or running after the call, or ran to its end meanwhile; `seq`: the
   * first of them) or an error outcome:
   *
   * - NOT_PAUSED when that action is not pending — a stale `seq`, or an action whose approval
   *   already ran (the run moved on), so a repeated approve of a completed approval queues
   *   nothing; NOT_FOUND for an unknown run; STORAGE_ERROR when the store or the queue fails,
   *   BUSY when other callers kept moving the job meanwhile (try again in either case: the jobs
   *   of a batch already queued are not queued twice).
   * - Approving while the approval's job is queued or running answers the same and queues nothing
   *   (two clicks, two approvers at once, "approve all" beside "approve this one": one job per
   *   action, and the runtime runs the call once).
   * - Approving after that job gave up (its retries spent in a long outage, on BUSY, or on workers
   *   without the connector the call needs) — the run still paused at that action — puts the kept
   *   job back to run, with this call's `by` and `reason` and all its attempts anew.
   *
   * @example
   * const approved = await queue.approve({ executionId, seq: 1, by: "ann" });
   * if ("status" in approved) console.warn(approved.code, approved.error);
   * else await queue.waitForOutcome(executionId, { timeoutMs: 60_000 });
   */
  approve(input: ApproveInput): Promise<{ executionId: string; seq: number; seqs: number[] } | ErrorOutcome>;
  /**
   * Rejects the pending call right here through the runtime (no pass to run, so no job) and
   * publishes a `rejected` event. False when that call was not pending; rejects with
   * `CodemodeError` STORAGE_ERROR or BUSY like `runtime.reject`.
   */
  reject(input: { executionId: string; seq: number; by?: string; reason?: string }): Promise<boolean>;
  /**
   * Queues a pass for a run that is `running` with no job (its job gave up, or was never added), as
   * the job `run_<executionId>`. A run job of that id already queued or running is left alone (no
   * second job); one that gave up is put back to run with all its attempts anew. Rejects with
   * BullMQ's error when the queue cannot be reached (`CodemodeError` BUSY when other callers kept
   * moving the job).
   *
   * @example
   * for (const run of (await runtime.executions({ status: "running" })).items) await queue.requeue(run.id);
   */
  requeue(executionId: string): Promise<void>;
  /** Waits until the run pauses for a person or ends, and returns that outcome from the store. */
  waitForOutcome(executionId: string, options?: WaitForOutcomeOptions): Promise<Outcome>;
  /** Lifecycle events of every run of the fleet: paused, completed, error, rejected, stalled, failed. */
  readonly events: CodemodeEvents;
  /**
   * Resolves once `events` is live: nothing published after this is missed. An approval inbox
   * subscribes, awaits this, then lists `runtime.pending()` once to catch up on older pauses.
   */
  ready(): Promise<void>;
  /** The BullMQ queue underneath, for dashboards and metrics. */
  readonly bullmq: Queue<CodemodeJobData, CodemodeJobResult, CodemodeJobName>;
  /** Closes the BullMQ connections it opened. The runtime is yours to close. */
  close(): Promise<void>;
}

const IN_FLIGHT = new Set(["waiting", "active", "delayed", "prioritized", "waiting-children"]);

/**
 * The web process's side of the fleet: hands runs and approvals to workers as jobs, and tells
 * when they are done. Job data carries ids only; code and log stay in the runtime's store.
 *
 * @example
 * const queue = createCodemodeQueue({ runtime, connection: { redis: process.env.REDIS_URL! } });
 * const submitted = await queue.submit({ code });
 * if ("executionId" in submitted && !("status" in submitted)) {
 *   const outcome = await queue.waitForOutcome(submitted.executionId, { timeoutMs: 60_000 });
 * }
 */
export function createCodemodeQueue(options: CodemodeQueueOptions): CodemodeQueue {
  const { runtime } = options;
  const name = options.name ?? DEFAULT_QUEUE_NAME;
  const warn = (message: string) => (options.logger ?? console).warn(`[codemode/bullmq] ${message}`);
  const opened = openConnection(options.connection);
  const queue = new Queue<CodemodeJobData, CodemodeJobResult, CodemodeJobName>(
    name,
    opened.options,
    opened.backend as never,
  );
  queue.on("error", (error: Error) => warn(`queue "${name}": ${error.message}`));
  const events = new LifecycleEvents(name, opened, warn);

  return {
    events: events.public,
    bullmq: queue,
    ready: () => events.live,
    async submit(input) {
      const submitted = await runtime.submit(input);
      if ("status" in submitted) return submitted;
      try {
        // A new execution id: no job of this id can exist yet, so a plain add is enough.
        await queue.add(
          "run",
          { executionId: submitted.executionId },
          jobOptions(runJobId(submitted.executionId), options.retry),
        );
      } catch (error) {
        // Stored and listed, but no job: the workers' sweep (sweep.ts) gives it one once it has
        // gone `orphanAfterMs` without a change, and it runs. The caller learns the store failed.
        return errorOutcomeOf(
          submitted.executionId,
          "STORAGE_ERROR",
          `the run was stored but its job could not be added (${messageOf(error)}); the workers' sweep gives it a job and it runs`,
        );
      }
      return { executionId: submitted.executionId };
    },
    async approve(input) {
      const executionId = String(input?.executionId ?? "");
      let seqs: number[];
      try {
        const pending = await pendingActions(runtime, executionId);
        if (!Array.isArray(pending)) return pending;
        if (input.seq !== undefined && !pending.some((action) => action.seq === input.seq))
          return errorOutcomeOf(executionId, "NOT_PAUSED", notPendingMessage(input.seq, pending));
        seqs = input.seq !== undefined ? [input.seq] : pending.map((action) => action.seq).sort((a, b) => a - b);
        const audit = {
          ...(input.by !== undefined ? { by: input.by } : {}),
          ...(input.reason !== undefined ? { reason: input.reason } : {}),
        };
        // One after the other, in seq order: the jobs are taken in the order they were added.
        for (const seq of seqs)
          await addJob(queue, "approve", { executionId, seq, ...audit }, approveJobId(executionId, seq), options.retry);
      } catch (error) {
        return errorOutcomeOf(
          executionId,
          CodemodeError.isInstance(error) ? error.code : "STORAGE_ERROR",
          messageOf(error),
        );
      }
      return { executionId, seq: seqs[0] as number, seqs };
    },
    async reject(input) {
      const rejected = await runtime.reject(input);
      if (rejected) {
        // The decision is made and recorded; an event that cannot be published is only late news.
        await events
          .publishRejected(input.executionId, input.seq, input.by)
          .catch((error: unknown) =>
            warn(`rejected ${input.executionId}, but could not publish the event: ${messageOf(error)}`),
          );
      }
      return rejected;
    },
    async requeue(executionId) {
      await addJob(queue, "run", { executionId }, runJobId(executionId), options.retry);
    },
    waitForOutcome(executionId, waitOptions) {
      const approvalInFlight = async (id: string, seq: number) =>
        IN_FLIGHT.has(await queue.getJobState(approveJobId(id, seq)));
      return waitForOutcome({ runtime, events, approvalInFlight }, String(executionId), waitOptions);
    },
    async close() {
      await events.close();
      await queue.close().catch(() => undefined);
      await opened.close();
    },
  };
}

/** The actions the run waits on now (at least one), or the error outcome that says why there are none. */
async function pendingActions(runtime: QueueRuntime, executionId: string): Promise<PendingAction[] | ErrorOutcome> {
  const { items } = await runtime.pending(executionId);
  if (items.length > 0) return items;
  const outcome = await runtime.outcome(executionId);
  if (!outcome) return errorOutcomeOf(executionId, "NOT_FOUND", `execution ${executionId} is not in the store`);
  if (outcome.status === "error" && outcome.code === "BUSY") {
    // Submitted or approved already: its pass is queued, under way, or stopped with its job given up.
    return errorOutcomeOf(
      executionId,
      "NOT_PAUSED",
      `execution ${executionId} is running, not paused (its pass is queued or under way; if its job gave up, queue.requeue it)`,
    );
  }
  return errorOutcomeOf(
    executionId,
    "NOT_PAUSED",
    `execution ${executionId} is not paused (${outcome.status === "error" ? outcome.code : outcome.status})`,
  );
}

/** Why `seq` cannot be approved, naming what is pending instead (the first ten), as the runtime does. */
function notPendingMessage(seq: number, pending: readonly PendingAction[]): string {
  const now = pending
    .slice(0, 10)
    .map((action) => `seq ${action.seq} (${action.connector}.${action.method})`)
    .join(", ");
  return `action ${seq} is not pending; pending now: ${now}${pending.length > 10 ? ", …" : ""}`;
}

function messageOf(error: unknown): string {
  return errorMessage(error);
}
