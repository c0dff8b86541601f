/** How long a call run as an upstream task is awaited in all, unless `taskTimeoutMs` says otherwise. */
export const DEFAULT_TASK_TIMEOUT_MS = 10 * 60_000;

/** How one upstream task is awaited: the same bounds whichever protocol and SDK carry the task. */
export interface UpstreamTaskOptions {
  /** Per request (`tools/call`, each `tasks/get`, `tasks/result`, `tasks/cancel`): the connector's `timeoutMs`. */
  timeoutMs?: number;
  /** The whole wait for the task, polls included. */
  taskTimeoutMs: number;
  /** The calling pass's time limit (epoch ms): the wait counts against it, whichever ends first. */
  deadline?: number;
  /** The run was cancelled: stop waiting and cancel the upstream task. */
  signal?: AbortSignal;
}

/** The end of one task's wait: `signal` aborts, with the reason the call rejects with, when it comes. */
export interface TaskDeadline {
  signal: AbortSignal;
  /** Stops the timer and the listener on the run's signal; call it when the wait ends, however. */
  dispose(): void;
}

/**
 * The wait for an upstream task ends at `taskTimeoutMs`, at the calling pass's deadline when that
 * comes sooner, or when the run is cancelled; the signal's reason says which, naming the call.
 *
 * @example
 * const deadline = taskDeadline("ci.build", { taskTimeoutMs: 600_000 });
 * try { await poll(deadline.signal); } finally { deadline.dispose(); }
 */
export function taskDeadline(label: string, options: UpstreamTaskOptions): TaskDeadline {
  const controller = new AbortController();
  const passLeft = options.deadline === undefined ? Number.POSITIVE_INFINITY : options.deadline - Date.now();
  const why =
    passLeft < options.taskTimeoutMs
      ? `${label}: the pass's time limit ran out while the upstream task ran`
      : `${label}: the upstream task took longer than ${options.taskTimeoutMs} ms`;
  const timer = setTimeout(
    () => controller.abort(new Error(why)),
    // Node fires a timer of more than 2^31-1 ms at once: a wait that long is "never" here.
    Math.max(0, Math.min(passLeft, options.taskTimeoutMs, MAX_TIMER_MS)),
  );
  const cancelled = () => controller.abort(new Error(`${label}: the run was cancelled while the upstream task ran`));
  if (options.signal?.aborted) cancelled();
  options.signal?.addEventListener("abort", cancelled, { once: true });
  return {
    signal: controller.signal,
    dispose() {
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", cancelled);
    },
  };
}

/** The reason a task's wait ended, as the error the call rejects with. */
export function deadlineError(signal: AbortSignal, fallback: unknown): Error {
  if (signal.reason instanceof Error) return signal.reason;
  return fallback instanceof Error ? fallback : new Error(String(fallback));
}

/** The longest delay a Node timer takes as it is (a longer one fires after 1 ms). */
const MAX_TIMER_MS = 2_147_483_647;

/** Between two polls of an upstream task: what the server suggests, kept between 10 ms and a minute (1 s when it suggests nothing usable). */
export function pollIntervalOf(suggested: unknown): number {
  if (typeof suggested !== "number" || !Number.isFinite(suggested)) return 1_000;
  return Math.min(60_000, Math.max(10, suggested));
}

/** Waits `ms`, or less when `signal` aborts first (then resolves too: the caller checks the signal). */
export function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}
