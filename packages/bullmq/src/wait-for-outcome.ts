import type { CodemodeRuntime, Outcome } from "@codemode/core";
import { errorMessage } from "@codemode/core/adapters";
import { errorOutcomeOf } from "./jobs.js";
import type { LifecycleEvents } from "./lifecycle-events.js";

export interface WaitForOutcomeOptions {
  /** How long to wait for the run to pause or end. Default 30 000 ms; then a BUSY outcome. */
  timeoutMs?: number;
  /**
   * How often the store is read again without an event, as a safety net for an event lost to a
   * reconnect. Events wake the wait at once; this only bounds the delay when one is lost.
   * Default 2 000 ms.
   */
  pollMs?: number;
}

export interface WaitDependencies {
  runtime: Pick<CodemodeRuntime, "outcome">;
  events: LifecycleEvents;
  /** Whether an approve job for that pending call is still queued or running. */
  approvalInFlight(executionId: string, seq: number): Promise<boolean>;
}

/**
 * Waits until the run has an outcome a person or a model can act on — paused at actions none of
 * which has an approval still queued or running, completed, or ended — and returns it, read from
 * the store. It listens first and reads second, so an outcome that landed before the call is what
 * the first read finds, and one that lands after wakes it. A run that is still running at the deadline is a BUSY outcome; an
 * unknown id is NOT_FOUND.
 */
export async function waitForOutcome(
  dependencies: WaitDependencies,
  executionId: string,
  options: WaitForOutcomeOptions = {},
): Promise<Outcome> {
  const deadline = Date.now() + (options.timeoutMs ?? 30_000);
  const pollMs = options.pollMs ?? 2_000;
  let woken = false;
  let wake: () => void = () => undefined;
  const unsubscribe = dependencies.events.watch(executionId, () => {
    woken = true;
    wake();
  });
  try {
    // Until the reader is live an event could slip past; the first read after it is what counts.
    await untilLiveOr(dependencies.events.live, deadline);
    for (;;) {
      woken = false;
      const current = await readSettled(dependencies, executionId);
      if (current.settled) return current.outcome;
      const left = deadline - Date.now();
      if (left <= 0) return current.outcome;
      if (woken) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(pollMs, left));
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = () => undefined;
    }
  } finally {
    unsubscribe();
  }
}

/** The store's answer, and whether it is one to hand back (otherwise: what to return at the deadline). */
async function readSettled(
  dependencies: WaitDependencies,
  executionId: string,
): Promise<{ settled: boolean; outcome: Outcome }> {
  let outcome: Outcome | null;
  try {
    outcome = await dependencies.runtime.outcome(executionId);
  } catch (error) {
    return { settled: false, outcome: errorOutcomeOf(executionId, "STORAGE_ERROR", errorMessage(error)) };
  }
  if (!outcome)
    return {
      settled: true,
      outcome: errorOutcomeOf(executionId, "NOT_FOUND", `execution ${executionId} is not in the store`),
    };
  // Running: a worker has it, or it waits for one.
  if (outcome.status === "error" && outcome.code === "BUSY") return { settled: false, outcome };
  const approved = outcome.status === "paused" ? await approvalsInFlight(dependencies, outcome) : [];
  if (approved.length > 0) {
    // Approved, and the resumed pass has not run yet: this pause is already (partly) answered.
    const seqs = approved.slice(0, 10).join(", ") + (approved.length > 10 ? ", …" : "");
    return {
      settled: false,
      outcome: errorOutcomeOf(
        executionId,
        "BUSY",
        `execution ${executionId} was approved at seq ${seqs}; the resumed pass has not finished yet`,
      ),
    };
  }
  return { settled: true, outcome };
}

/**
 * The pending actions whose approve job is still queued or running. Any one of them means the
 * pause is about to change (a batch approved one action at a time passes through several pauses,
 * each with fewer actions), so the wait goes on until none is left in flight.
 */
async function approvalsInFlight(
  dependencies: WaitDependencies,
  outcome: Extract<Outcome, { status: "paused" }>,
): Promise<number[]> {
  const { executionId } = outcome;
  const inFlight = await Promise.all(
    outcome.pending.map((action) => dependencies.approvalInFlight(executionId, action.seq).catch(() => false)),
  );
  return outcome.pending.flatMap((action, index) => (inFlight[index] ? [action.seq] : []));
}

/** Waits for the events to be live, or the deadline, whichever comes first; leaves no timer behind. */
async function untilLiveOr(live: Promise<void>, deadline: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, Math.max(0, deadline - Date.now()));
  });
  try {
    await Promise.race([live.catch(() => undefined), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
