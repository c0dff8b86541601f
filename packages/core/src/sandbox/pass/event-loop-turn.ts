/**
 * Work that starts isolate work, held for the event loop's next check phase.
 *
 * Why: isolated-vm hands each completion (a `Reference.apply` that settled, a callback from a
 * sandbox) to this thread as a task, and runs the tasks of one wake-up in a loop until its queue
 * is empty. Microtasks run after each task. When those microtasks start more isolate work at once
 * (a reply delivered to a sandbox, a new pass's isolate), its completion joins the same queue
 * before the queue empties: with many passes in flight on a store that answers in-process, the
 * queue never empties and the event loop never leaves its poll phase. Timers (pass watchdogs,
 * lease renewals) and `setImmediate` callbacks then wait for as long as the burst lasts.
 *
 * Starting that work from the check phase instead lets the queue drain: every turn of the loop
 * runs the completions that arrived, then starts the work they asked for, then the timers run.
 * One `setImmediate` serves every piece of work queued in a turn.
 */
const queued: Array<() => void> = [];
let scheduled = false;

/**
 * Longest stretch of queued work one check phase runs; the rest waits for the next turn, so that
 * the timers due meanwhile run in between (starting an isolate costs a millisecond or more).
 */
const SLICE_MS = 10;

/** Runs `work` in the event loop's next check phase, with everything else queued for it. */
export function onNextTurn(work: () => void): void {
  queued.push(work);
  schedule();
}

/** Resolves in the event loop's next check phase. */
export function nextTurn(): Promise<void> {
  return new Promise<void>((resolve) => onNextTurn(resolve));
}

function runQueued(): void {
  scheduled = false;
  // Work queued while this batch runs waits for the next turn: that is the point.
  const batch = queued.splice(0);
  const until = performance.now() + SLICE_MS;
  let done = 0;
  while (done < batch.length && (done === 0 || performance.now() < until)) {
    const work = batch[done++]!;
    try {
      work();
    } catch {
      // Each piece of work reports its own failure; one must not keep the others from running.
    }
  }
  if (done < batch.length) {
    // First in, first out: what this turn had no time for goes ahead of what came meanwhile.
    queued.unshift(...batch.slice(done));
    schedule();
  }
}

function schedule(): void {
  if (scheduled) return;
  scheduled = true;
  setImmediate(runQueued);
}
