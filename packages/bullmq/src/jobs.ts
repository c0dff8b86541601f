import type { ErrorCode, ErrorOutcome, Outcome } from "@codemode/core";

/** The queue name when none is given. Every queue, worker and events listener of one fleet must use the same. */
export const DEFAULT_QUEUE_NAME = "codemode";

/**
 * What a job asks a worker to do. Ids only: the code, the log and the decision's audit trail stay
 * in the runtime's store, so a job is small and holds nothing a second copy could disagree with.
 *
 * - `run`: a pass of a `running` execution whose lease is free — the first pass of a submitted
 *   run, or the resumed pass of one whose worker died (`runtime.recover({ executionId })`).
 * - `approve`: approves the pending call at `seq` and runs the resumed pass (`runtime.approve`).
 *   A batch approved at once is one approve job per action (`queue.approve`), each its own seq.
 */
export type CodemodeJobData =
  | { executionId: string }
  | { executionId: string; seq: number; by?: string; reason?: string };
export type CodemodeJobName = "run" | "approve";

/** A call waiting for a person, without its arguments (read them with `runtime.pending(executionId)`). */
export interface PendingCall {
  seq: number;
  connector: string;
  method: string;
}

/**
 * What a finished job returns, and what `completed` job events carry: the state the pass left
 * the run in, small enough for an event stream. The full outcome is in the store
 * (`runtime.outcome(executionId)`).
 */
export type CodemodeJobResult =
  | { executionId: string; status: "completed" }
  | { executionId: string; status: "paused"; pending: PendingCall[] }
  | { executionId: string; status: "error"; code: ErrorCode; error: string };

/**
 * Job ids follow from execution ids, so adding the same job twice (a retried HTTP request, two
 * clicks on "approve") is ignored by BullMQ while the first is queued or running. BullMQ also
 * ignores the add while a finished job of that id is kept (a failed one, for a week), so a
 * repeated add goes through `addJob` (add-job.ts), which puts such a job back to run. BullMQ job
 * ids may not contain ":", hence "_" (execution ids are UUIDs: no "_" inside).
 */
export function runJobId(executionId: string): string {
  return `run_${executionId}`;
}

export function approveJobId(executionId: string, seq: number): string {
  return `approve_${executionId}_${seq}`;
}

/** The execution a job id of ours names, or undefined for a job id that is not ours. */
export function executionIdOfJob(jobId: string | undefined): string | undefined {
  const match = /^(?:run|approve)_([^_]+)(?:_\d+)?$/.exec(jobId ?? "");
  return match?.[1];
}

/**
 * Outcomes that mean "not now" rather than "this is how the run ended": the store failed, the
 * run is held by another pass (or by a dead worker whose lease has not lapsed yet), or this
 * worker lacks a connector the run uses. The job throws so BullMQ retries it with backoff. Every
 * other outcome — the program's own errors included — completes the job.
 */
export const RETRY_CODES: ReadonlySet<ErrorCode> = new Set<ErrorCode>(["STORAGE_ERROR", "BUSY", "MISSING_CONNECTOR"]);

/** Thrown by a job whose outcome is in `RETRY_CODES`; BullMQ records its message and retries. */
export class RetryableOutcomeError extends Error {
  override readonly name = "RetryableOutcomeError";
  constructor(readonly outcome: ErrorOutcome) {
    super(`${outcome.code}: ${outcome.error}`);
  }
}

/** The backoff type our jobs carry; the worker's `backoffStrategy` computes its delays. */
export const BACKOFF_TYPE = "codemode";

/** Retry settings of the jobs a queue adds. */
export interface RetryOptions {
  /** Attempts per job, the first included. Default 20. */
  attempts?: number;
  /** Delay before the first retry; each next one doubles, up to `maxDelayMs`, with ±25% jitter. Default 500 ms. */
  delayMs?: number;
}

/** The longest wait between two attempts, as a multiple of `delayMs`. */
const MAX_DELAY_FACTOR = 64;

/** Exponential backoff with a ceiling and jitter, so a fleet that met an outage does not retry in step. */
export function backoffDelay(attemptsMade: number, delayMs: number): number {
  const exponential = delayMs * 2 ** Math.max(0, attemptsMade - 1);
  const capped = Math.min(exponential, delayMs * MAX_DELAY_FACTOR);
  return Math.round(capped * (0.75 + Math.random() * 0.5));
}

/** The options every job of ours is added with. */
export function jobOptions(jobId: string, retry: RetryOptions = {}) {
  return {
    jobId,
    attempts: retry.attempts ?? 20,
    backoff: { type: BACKOFF_TYPE, delay: retry.delayMs ?? 500 },
    // A finished job has nothing left to say: its outcome is in the runtime's store, and the
    // runtime itself refuses a second pass of a finished run, so a later duplicate costs a read.
    removeOnComplete: true,
    // Jobs that gave up stay a week for an operator to look at; `queue.requeue` (a run job) or
    // `queue.approve` (an approve job) puts one back to run.
    removeOnFail: { age: 7 * 24 * 3600 },
  };
}

/** Checks job data read back from the queue; throws for data that is not ours. */
export function checkJobData(
  name: string,
  data: unknown,
):
  | { kind: "run"; executionId: string }
  | { kind: "approve"; executionId: string; seq: number; by?: string; reason?: string } {
  const record = (typeof data === "object" && data !== null ? data : {}) as Record<string, unknown>;
  const executionId = record.executionId;
  if (typeof executionId !== "string" || executionId === "") throw new TypeError(`job "${name}" has no executionId`);
  if (name === "run") return { kind: "run", executionId };
  if (name !== "approve") throw new TypeError(`job "${name}" is not a Code Mode job (run, approve)`);
  const seq = record.seq;
  if (typeof seq !== "number" || !Number.isInteger(seq) || seq < 0)
    throw new TypeError(`approve job of ${executionId} has no seq`);
  return {
    kind: "approve",
    executionId,
    seq,
    ...(typeof record.by === "string" ? { by: record.by } : {}),
    ...(typeof record.reason === "string" ? { reason: record.reason } : {}),
  };
}

/** The small, event-sized form of an outcome. */
export function jobResultOf(outcome: Outcome): CodemodeJobResult {
  const { executionId } = outcome;
  if (outcome.status === "completed") return { executionId, status: "completed" };
  if (outcome.status === "paused")
    return {
      executionId,
      status: "paused",
      pending: outcome.pending.map(({ seq, connector, method }) => ({ seq, connector, method })),
    };
  return {
    executionId,
    status: "error",
    code: outcome.code,
    error: outcome.error.length > 500 ? `${outcome.error.slice(0, 500)}…` : outcome.error,
  };
}

/** An error outcome made here (core keeps its own helper internal). */
export function errorOutcomeOf(executionId: string, code: ErrorCode, error: string): ErrorOutcome {
  return { status: "error", executionId, code, error, calls: [] };
}
