import { CodemodeError, type CodemodeRuntime, type Outcome } from "@codemode/core";
import { errorMessage } from "@codemode/core/adapters";
import {
  type CodemodeJobResult,
  checkJobData,
  errorOutcomeOf,
  jobResultOf,
  RETRY_CODES,
  RetryableOutcomeError,
} from "./jobs.js";

/** What a worker needs of the runtime: the two operations that run passes, and the store's answer. */
export type WorkerRuntime = Pick<CodemodeRuntime, "recover" | "approve" | "outcome">;

/**
 * Runs one job: the pass it asks for, or — when that pass already happened or is under way
 * elsewhere — nothing but a read. Returns the event-sized result; throws `RetryableOutcomeError`
 * for STORAGE_ERROR, BUSY and MISSING_CONNECTOR so BullMQ retries with backoff. The program's own
 * errors are results, not throws: running it again would fail the same way.
 *
 * Every path is safe to repeat, because BullMQ runs a job again when its worker stalled or died:
 * the runtime's lease lets one pass at a time hold the run, and approve and recover refuse a run
 * that is not in the state they act on.
 *
 * @example
 * const worker = new Worker("codemode", (job) => runJob(runtime, job), options);
 */
export async function runJob(runtime: WorkerRuntime, job: { name: string; data: unknown }): Promise<CodemodeJobResult> {
  const outcome = await passFor(runtime, checkJobData(job.name, job.data));
  if (outcome.status === "error" && RETRY_CODES.has(outcome.code)) throw new RetryableOutcomeError(outcome);
  return jobResultOf(outcome);
}

async function passFor(runtime: WorkerRuntime, job: ReturnType<typeof checkJobData>): Promise<Outcome> {
  const { executionId } = job;
  if (job.kind === "approve") {
    const approved = await approveOne(runtime, job);
    // NOT_PAUSED: this job ran before on a worker that died mid-pass (the run is `running` with
    // the approved entry, and recover resumes it), or the run moved on; either way, look below.
    if (!notPaused(approved)) return approved;
  }
  const [recovered] = await recoverOne(runtime, executionId);
  // Nothing to run: the run is paused or finished (this job's pass already happened), or it is
  // running under a lease someone holds — a live pass, or a dead worker's lease not yet lapsed:
  // the store says BUSY, and the job is retried until that lease lapses or the run ends.
  const outcome = recovered ?? (await currentOutcome(runtime, executionId));
  // The pass a dead worker left (for another action of the batch) may stop again at this job's
  // action, still pending: approve it now, or this approval would be lost with the job's end.
  if (job.kind === "approve" && outcome.status === "paused" && outcome.pending.some(({ seq }) => seq === job.seq)) {
    const approved = await approveOne(runtime, job);
    if (!notPaused(approved)) return approved;
    return currentOutcome(runtime, executionId);
  }
  return outcome;
}

function approveOne(
  runtime: WorkerRuntime,
  job: Extract<ReturnType<typeof checkJobData>, { kind: "approve" }>,
): Promise<Outcome> {
  return runtime.approve({
    executionId: job.executionId,
    seq: job.seq,
    ...(job.by !== undefined ? { by: job.by } : {}),
    ...(job.reason !== undefined ? { reason: job.reason } : {}),
  });
}

function notPaused(outcome: Outcome): boolean {
  return outcome.status === "error" && outcome.code === "NOT_PAUSED";
}

async function recoverOne(runtime: WorkerRuntime, executionId: string): Promise<Outcome[]> {
  try {
    return await runtime.recover({ executionId });
  } catch (error) {
    return [failure(executionId, error)];
  }
}

async function currentOutcome(runtime: WorkerRuntime, executionId: string): Promise<Outcome> {
  try {
    return (
      (await runtime.outcome(executionId)) ??
      errorOutcomeOf(executionId, "NOT_FOUND", `execution ${executionId} is not in the store`)
    );
  } catch (error) {
    return failure(executionId, error);
  }
}

function failure(executionId: string, error: unknown): Outcome {
  const code = CodemodeError.isInstance(error) ? error.code : "STORAGE_ERROR";
  return errorOutcomeOf(executionId, code, errorMessage(error));
}
