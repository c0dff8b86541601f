import type { Outcome } from "../../outcome.js";
import type { RuntimeContext } from "../context/index.js";
import { asStorageError, failureOutcome, missingConnectors } from "../transitions/index.js";
import { handOver } from "./control-step.js";
import { rowsOldestFirst } from "./walk-rows.js";

export interface RecoverOptions {
  /** Only this execution. Default: every `running` execution of this runtime whose host is gone. */
  executionId?: string;
}

/**
 * Resumes `running` executions whose lease lapsed — their host died mid-pass — with a new pass
 * each, and returns the outcomes (`[]` when there is nothing to recover). A run whose worker is
 * alive and renewing is never taken: its lease is held. Resuming grants no new authority:
 * recorded calls replay; calls not made yet ask for approval as always; the call that was
 * `executing` when the host died runs again with the same idempotency key (R-RP-4), or, for a
 * tool with `onInterrupted: "ask"`, goes back to `pending` and waits for a person (R-RP-4b); a
 * run that was approved for one call is resumed for that same call.
 *
 * A store failure met for one run is that run's STORAGE_ERROR outcome; one met while listing the
 * running executions (there is no run to report it on) rejects with `CodemodeError` STORAGE_ERROR.
 */
export async function recover(context: RuntimeContext, options: RecoverOptions = {}): Promise<Outcome[]> {
  const outcomes: Outcome[] = [];
  try {
    if (options.executionId !== undefined) {
      const outcome = await recoverOne(context, String(options.executionId));
      return outcome ? [outcome] : [];
    }
    for await (const row of rowsOldestFirst(context, "running")) {
      const outcome = await recoverOne(context, row.id);
      if (outcome) outcomes.push(outcome);
    }
    return outcomes;
  } catch (error) {
    throw asStorageError("could not look for executions to recover", error);
  }
}

/** A new pass for one running execution whose lease is free; undefined when there is nothing to do. */
function recoverOne(context: RuntimeContext, executionId: string): Promise<Outcome | undefined> {
  const options = {
    waitMs: 0,
    // Held: its worker is alive and renewing (or another recover took it first).
    busy: (): Outcome | undefined => undefined,
    // R-RT-3: that run's outcome says the store failed; it is not skipped as if absent.
    failed: (error: unknown) => failureOutcome(executionId, error),
  };
  return handOver<Outcome | undefined>(context, executionId, options, async (_lease, start) => {
    const head = await context.store.readHead(executionId);
    // Finished, paused or gone meanwhile: not ours to resume.
    if (head?.status !== "running") return undefined;
    const { code, log } = await context.store.readCodeAndLog(head);
    // Another worker (configured with them) can recover it; this one must not run it without them.
    const missing = missingConnectors(context, head, log, "; a worker that has them can recover it");
    if (missing) return failureOutcome(executionId, missing, log);
    return start({ head, code, log });
  });
}
