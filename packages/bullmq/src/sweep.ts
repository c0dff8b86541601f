import type { CodemodeRuntime } from "@codemode/core";
import { errorMessage } from "@codemode/core/adapters";
import type { Queue } from "bullmq";
import { addJob } from "./add-job.js";
import {
  type CodemodeJobData,
  type CodemodeJobName,
  type CodemodeJobResult,
  type RetryOptions,
  runJobId,
} from "./jobs.js";

/** Job states in which a run's job will still run: the run is not forgotten. */
export const JOB_IN_FLIGHT: ReadonlySet<string> = new Set([
  "waiting",
  "active",
  "delayed",
  "prioritized",
  "waiting-children",
]);

/** The runs a sweep looks at per page. */
const PAGE = 200;

export interface SweepSettings {
  /** How long a `running` run must have gone without a change before a sweep gives it a job. */
  orphanAfterMs: number;
  retry?: RetryOptions;
  warn(message: string): void;
}

/**
 * One sweep of the fleet's runs: every `running` run that has not changed for `orphanAfterMs`
 * and has no job that will run it gets one (`run_<id>`, which recovers it: a live pass's lease
 * makes that a harmless BUSY). That finds what a store fault left without a job: a submit whose
 * job could not be added while the store restarted, or whose process died between storing the
 * run and queueing it. Listing the running runs also repairs listing rows that lag behind their
 * runs (a pause whose listing write failed during an outage is listed as paused again, so
 * `pending()` shows it). Resolves with the runs it queued; a store failure ends the sweep early,
 * said through `warn`.
 */
export async function sweepRuns(
  runtime: Pick<CodemodeRuntime, "executions">,
  queue: Queue<CodemodeJobData, CodemodeJobResult, CodemodeJobName>,
  settings: SweepSettings,
): Promise<string[]> {
  const queued: string[] = [];
  const before = Date.now() - settings.orphanAfterMs;
  try {
    let cursor: string | undefined;
    do {
      const page = await runtime.executions({ status: "running", limit: PAGE, ...(cursor ? { cursor } : {}) });
      for (const run of page.items) {
        if (run.updatedAt > before) continue;
        if (JOB_IN_FLIGHT.has(await queue.getJobState(runJobId(run.id)))) continue;
        await addJob(queue, "run", { executionId: run.id }, runJobId(run.id), settings.retry);
        queued.push(run.id);
      }
      cursor = page.cursor;
    } while (cursor);
  } catch (error) {
    settings.warn(`the sweep of running runs stopped: ${errorMessage(error)}`);
  }
  if (queued.length > 0)
    settings.warn(`the sweep gave ${queued.length} running run(s) without a job one: ${queued.slice(0, 5).join(", ")}`);
  return queued;
}
