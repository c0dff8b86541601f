import { CodemodeError } from "@codemode/core";
import { ErrorCode, type Queue } from "bullmq";
import {
  type CodemodeJobData,
  type CodemodeJobName,
  type CodemodeJobResult,
  jobOptions,
  type RetryOptions,
} from "./jobs.js";

/** Rounds of add, read and retry before giving up while other callers keep moving the same job. */
const ROUNDS = 3;

/**
 * Adds the job of a fixed id (`run_<id>`, `approve_<id>_<seq>`) so that a job of that id runs
 * after this call, whatever became of an earlier one.
 *
 * BullMQ ignores an add whose id is taken — also by a finished job it keeps (failed jobs stay a
 * week) — and answers as if it had added it. So the job's state is read after the add:
 *
 * - queued or running: that job runs (this add's, or an earlier one's: never two jobs of one id);
 * - failed, or completed and kept: it swallowed the add, so it goes back to wait with
 *   `Job.retry`, carrying this add's data (the approver of record is the one who asked last) and
 *   all its attempts anew. BullMQ moves a job only while it is still in that state: of callers
 *   racing, one moves it and the others find it queued on their next round;
 * - gone: it ran to its end and was removed after this add was asked for; nothing is left to do.
 *
 * Rejects with `CodemodeError` BUSY when the job kept changing state under other callers, and
 * with BullMQ's error when the queue cannot be reached.
 *
 * @example
 * await addJob(queue, "run", { executionId }, runJobId(executionId), { attempts: 5 });
 */
export async function addJob(
  queue: Queue<CodemodeJobData, CodemodeJobResult, CodemodeJobName>,
  name: CodemodeJobName,
  data: CodemodeJobData,
  jobId: string,
  retry?: RetryOptions,
): Promise<void> {
  for (let round = 1; ; round++) {
    const job = await queue.add(name, data, jobOptions(jobId, retry));
    const state = await job.getState();
    // Queued or running (this add's job or an earlier one), or gone (it ran to its end meanwhile).
    if (state !== "failed" && state !== "completed") return;
    try {
      // Data first: a worker may take the job the moment it is back.
      await job.updateData(data);
      await job.retry(state, { resetAttemptsMade: true, resetAttemptsStarted: true });
      return;
    } catch (error) {
      if (!movedMeanwhile(error)) throw error;
      if (round >= ROUNDS)
        throw new CodemodeError("BUSY", `job ${jobId} kept changing state while it was put back to run; try again`, {
          cause: error,
        });
    }
  }
}

/** Another caller put the job back (or it was removed) between our read and our retry. */
function movedMeanwhile(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === ErrorCode.JobNotInState || code === ErrorCode.JobNotExist;
}
