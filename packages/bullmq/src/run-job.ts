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

/**
 * What a worker needs of the runtime: the operations that run passes (`rerun` for a run a store
 * fault ended), the store's answer, and the listing its sweep reads (sweep.ts).
 */
export type WorkerRuntime = Pick<
  CodemodeRuntime,
  "recover" | "approve" | "outcome" | "rerun" | "execution" | "executions"
>;

/**
 * Times the fleet runs again a run that a store fault ended (`error`, STORAGE_ERROR, recorded)
 * before it leaves it to an operator (docs/fleet.md). Each is a new pass that replays what was
 * recorded; the job's back-off spaces them.
 */
export const STORE_FAULT_RERUNS = 3;

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
  const { outcome, final } = await afterStoreFault(runtime, await passFor(runtime, checkJobData(job.name, job.data)));
  if (!final && outcome.status === "error" && RETRY_CODES.has(outcome.code)) throw new RetryableOutcomeError(outcome);
  return jobResultOf(outcome);
}

/**
 * A run that a store fault ended while the store still answered (a write that failed or timed
 * out): its record says `error` STORAGE_ERROR, and retrying the job would only read that again.
 * The fleet runs it again itself, through `runtime.rerun`'s rules (a new pass under its lease;
 * recorded calls replay, a call left `executing` runs again with its idempotency key), at most
 * `STORE_FAULT_RERUNS` times; after that the job completes with the error, for an operator.
 */
async function afterStoreFault(runtime: WorkerRuntime, pass: Passed): Promise<{ outcome: Outcome; final: boolean }> {
  const { outcome, recorded } = pass;
  if (!recorded || outcome.status !== "error" || outcome.code !== "STORAGE_ERROR") return { outcome, final: false };
  const { executionId } = outcome;
  try {
    const state = await runtime.execution(executionId);
    const earlier = (state?.reruns ?? []).filter((rerun) => rerun.code === "STORAGE_ERROR").length;
    if (earlier >= STORE_FAULT_RERUNS) return { outcome, final: true };
    const report = await runtime.rerun({ executionId, codes: ["STORAGE_ERROR"] });
    const [result] = report.results;
    if (result?.action === "rerun" && result.outcome) return { outcome: result.outcome, final: false };
    // Taken by another worker, or changed meanwhile: this job looks again after its back-off.
    return { outcome, final: false };
  } catch (error) {
    return { outcome: failure(executionId, error), final: false };
  }
}

/** A pass's outcome, and whether it was read from the store's record (not a failure met just now). */
interface Passed {
  outcome: Outcome;
  recorded: boolean;
}

async function passFor(runtime: WorkerRuntime, job: ReturnType<typeof checkJobData>): Promise<Passed> {
  const { executionId } = job;
  if (job.kind === "approve") {
    const approved = await approveOne(runtime, job);
    // NOT_PAUSED: this job ran before on a worker that died mid-pass (the run is `running` with
    // the approved entry, and recover resumes it), or the run moved on; either way, look below.
    if (!notPaused(approved)) return { outcome: approved, recorded: false };
  }
  const [recovered] = await recoverOne(runtime, executionId);
  // Nothing to run: the run is paused or finished (this job's pass already happened), or it is
  // running under a lease someone holds — a live pass, or a dead worker's lease not yet lapsed:
  // the store says BUSY, and the job is retried until that lease lapses or the run ends.
  const passed = recovered ? { outcome: recovered, recorded: false } : await currentOutcome(runtime, executionId);
  const { outcome } = passed;
  // The pass a dead worker left (for another action of the batch) may stop again at this job's
  // action, still pending: approve it now, or this approval would be lost with the job's end.
  if (job.kind === "approve" && outcome.status === "paused" && outcome.pending.some(({ seq }) => seq === job.seq)) {
    const approved = await approveOne(runtime, job);
    if (!notPaused(approved)) return { outcome: approved, recorded: false };
    return currentOutcome(runtime, executionId);
  }
  return passed;
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

async function currentOutcome(runtime: WorkerRuntime, executionId: string): Promise<Passed> {
  try {
    const stored = await runtime.outcome(executionId);
    if (stored) return { outcome: stored, recorded: true };
    return {
      outcome: errorOutcomeOf(executionId, "NOT_FOUND", `execution ${executionId} is not in the store`),
      recorded: false,
    };
  } catch (error) {
    return { outcome: failure(executionId, error), recorded: false };
  }
}

function failure(executionId: string, error: unknown): Outcome {
  const code = CodemodeError.isInstance(error) ? error.code : "STORAGE_ERROR";
  return errorOutcomeOf(executionId, code, errorMessage(error));
}
