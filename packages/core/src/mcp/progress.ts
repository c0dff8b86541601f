import { type ExecutionState, errorOutcome, type LogEntry, type Outcome } from "../outcome.js";
import type { CodemodeRuntime } from "../runtime/handle/index.js";

/** One `notifications/progress` as the server sends it; `progress` counts up by one from 1. */
export interface ProgressNote {
  progress: number;
  message: string;
}

export interface StartProgressOptions {
  /** Read for the run's log and console lines; any store, so it works across processes. */
  runtime: Pick<CodemodeRuntime, "execution">;
  executionId: string;
  /** Sends one notification; a rejection (the connection is gone) ends the progress quietly. */
  send: (note: ProgressNote) => Promise<void>;
  /** How often the run is read while it goes on. Default 150 ms. */
  pollMs?: number;
  /**
   * Follow the run past its pauses (for a task): while paused it is read every `followPausedMs`,
   * and once approved, in any process, its calls and next pause are reported too, until it ends,
   * a send fails, or `maxFollowMs` has passed. Without it, progress ends at the first pause.
   */
  followPausedMs?: number;
  /** How long a run is followed at most (with `followPausedMs`). Default 24 h. */
  maxFollowMs?: number;
  /** Console lines sent at most, over the whole run. Default 50. */
  maxConsoleLines?: number;
  /** Characters of one console line sent at most. Default 200. */
  maxLineLength?: number;
}

/** Log entry states after which a call has ended (`pending` waits; `executing` goes on). */
const ENDED = new Set(["applied", "error", "denied", "reverted"]);

/**
 * Reports a run as MCP progress while it goes on: each call's start and end (connector.method
 * and seq), console lines (bounded) and the pause, read by polling `runtime.execution` because
 * the runtime has no per-call hook and the run may be in another process. Polling stops when the
 * run leaves `running`, when a send fails, or when the returned function is called: it reads the
 * run one last time (so what happened before the answer is sent before it) and never throws.
 *
 * @example
 * const stop = startProgress({ runtime, executionId, send: (note) => extra.sendNotification(...) });
 * const [outcome] = await runtime.recover({ executionId });
 * await stop();
 */
export function startProgress(options: StartProgressOptions): () => Promise<void> {
  const pollMs = options.pollMs ?? 150;
  const reporter = new RunReporter(options);
  let progress = 0;
  let done = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let reading: Promise<void> = Promise.resolve();
  let paused = false;
  const follow = options.followPausedMs !== undefined;
  const followUntil = Date.now() + (options.maxFollowMs ?? 24 * 60 * 60_000);

  const send = async (message: string) => {
    if (done) return;
    progress += 1;
    try {
      await options.send({ progress, message });
    } catch {
      done = true;
    }
  };

  const readOnce = async () => {
    if (done) return;
    try {
      const state = await options.runtime.execution(options.executionId);
      if (!state) {
        done = true;
        return;
      }
      for (const message of reporter.notes(state)) await send(message);
      paused = state.status === "paused";
      if (state.status !== "running" && !(follow && paused)) done = true;
      if (follow && Date.now() > followUntil) done = true;
    } catch {
      // A store error ends the progress; the run's outcome reports what failed.
      done = true;
    }
  };

  const poll = () => {
    reading = readOnce().then(() => {
      if (done) return;
      timer = setTimeout(poll, paused ? (options.followPausedMs as number) : pollMs);
      // A run that waits for a person keeps no process alive.
      if (paused) timer.unref?.();
    });
  };
  poll();

  return async () => {
    clearTimeout(timer);
    await reading;
    clearTimeout(timer);
    await readOnce();
    done = true;
  };
}

/**
 * What a run's progress says, read after read: each call's start and end once, console lines up
 * to a bound, and each pause once. It keeps only what it has said (seqs and a line count), so
 * following a run costs the same memory after an hour as after a second.
 */
export class RunReporter {
  readonly #maxConsoleLines: number;
  readonly #maxLineLength: number;
  readonly #started = new Set<number>();
  readonly #ended = new Set<number>();
  #consoleSeen = 0;
  #consoleSent = 0;
  #consoleCut = false;
  #lastPause = "";

  constructor(options: { maxConsoleLines?: number; maxLineLength?: number } = {}) {
    this.#maxConsoleLines = options.maxConsoleLines ?? 50;
    this.#maxLineLength = options.maxLineLength ?? 200;
  }

  /** The messages this read of the run adds to what earlier reads said. */
  notes(state: ExecutionState): string[] {
    const messages: string[] = [];
    for (const entry of [...state.log].sort((a, b) => a.seq - b.seq)) {
      const name = `${clean(entry.connector, 80)}.${clean(entry.method, 80)}`;
      if (!this.#started.has(entry.seq)) {
        this.#started.add(entry.seq);
        messages.push(`call started: ${name} (seq ${entry.seq})`);
      }
      if (ENDED.has(entry.state) && !this.#ended.has(entry.seq)) {
        this.#ended.add(entry.seq);
        messages.push(`call ended: ${name} (seq ${entry.seq}, ${entry.state})`);
      }
    }
    const lines = state.logs ?? [];
    for (; this.#consoleSeen < lines.length; this.#consoleSeen++) {
      if (this.#consoleSent >= this.#maxConsoleLines) {
        if (!this.#consoleCut) messages.push("console: further lines are not sent as progress");
        this.#consoleCut = true;
        this.#consoleSeen = lines.length;
        break;
      }
      this.#consoleSent += 1;
      messages.push(`console: ${clean(String(lines[this.#consoleSeen]), this.#maxLineLength)}`);
    }
    // Once per pause: a run followed past its pauses is read many times while it waits.
    const pause = state.status === "paused" ? pendingCalls(state.log) : "";
    if (pause && pause !== this.#lastPause) messages.push(`paused: waiting for ${pause}`);
    this.#lastPause = pause;
    return messages;
  }
}

/**
 * Runs new code as `execute` does, with progress: stored first (`submit`) so the execution id is
 * known before the run starts, then run in this process (`recover`) and awaited.
 */
export async function executeWithProgress(
  runtime: CodemodeRuntime,
  run: string | { code: string; by?: string },
  progress: Omit<StartProgressOptions, "runtime" | "executionId">,
): Promise<Outcome> {
  const submitted = await runtime.submit(typeof run === "string" ? { code: run } : run);
  if ("status" in submitted) return submitted;
  const { executionId } = submitted;
  const stop = startProgress({ ...progress, runtime, executionId });
  try {
    const [outcome] = await runtime.recover({ executionId });
    return (
      outcome ?? (await runtime.outcome(executionId)) ?? errorOutcome(executionId, "NOT_FOUND", "the execution is gone")
    );
  } finally {
    await stop();
  }
}

function pendingCalls(log: LogEntry[]): string {
  const pending = log
    .filter((entry) => entry.state === "pending")
    .map((entry) => `${clean(entry.connector, 80)}.${clean(entry.method, 80)} (seq ${entry.seq})`);
  return pending.length > 0 ? `approval of ${pending.join(", ")}` : "approval";
}

/** One line, without control or bidi characters (a program's output must not reshape the client's display), cut. */
function clean(value: string, max: number): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is removed.
  const text = value.replace(/[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2066-\u2069]/g, " ");
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
