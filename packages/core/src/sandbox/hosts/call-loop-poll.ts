/**
 * The runtime's side of a program that calls tools in a loop, in a sandbox process.
 *
 * Between two calls of such a loop, the runtime's thread has nothing to do for a few tens of
 * microseconds: it goes to sleep, and the next request has to wake it, which on a virtual machine
 * can cost as much as the call itself. Once a pass alone in its process has made
 * `QUICK_CALLS_TO_POLL` calls in a row, each asked within `POLL_MS` of the previous answer, this
 * side polls for the next request instead of sleeping: a turn of the event loop at a time
 * (setImmediate), so the loop keeps serving everything else (timers, sockets, other passes) as it
 * would, and stops at the next message from the process, after `POLL_MS`, or when the pass ends.
 * It costs at most `POLL_MS` of this thread's time per call, and only while calls come that fast;
 * a program of a few calls never reaches the streak. Before the streak, a slow call ends it; once
 * it polls, `SLOW_CALLS_TO_STOP` slow calls in a row do: a loop's odd slow call (a collection, a
 * process that lost its core for a moment) would otherwise cost it the next
 * `QUICK_CALLS_TO_POLL` calls unpolled, each waking this side again.
 *
 * The sandbox process does its part the other way round: it spins for the reply to a call
 * (sandbox-process.ts, `SpinPolicy`).
 */

/** How long after answering a call this side polls for the next one; also what counts as quick. */
export const POLL_MS = 0.2;
/** Quick calls in a row before this side polls: a loop, not the few calls of a usual program. */
export const QUICK_CALLS_TO_POLL = 8;
/** Slow calls in a row that end a streak which has reached polling. */
export const SLOW_CALLS_TO_STOP = 3;

export class CallLoopPoll {
  /** When the last answer to a call was sent (performance.now()), until the next message comes. */
  private answeredAt: number | undefined;
  /** Calls in a row asked within POLL_MS of the answer before them. */
  private quickCalls = 0;
  /** Slow calls in a row since the streak reached polling. */
  private slowCalls = 0;
  /** Messages received from the process in all: a poll ends when this moves. */
  private received = 0;
  private polling = false;
  /** What ends the current poll: a message after the `pollSeen`th, or the clock reaching `pollUntil`. */
  private pollSeen = 0;
  private pollUntil = 0;

  constructor(private readonly clock: () => number = () => performance.now()) {}

  /** A message came from the process: a request is counted as quick or not, a result ends the streak. */
  message(type: string): void {
    this.received++;
    if (type === "request") {
      if (this.answeredAt !== undefined) this.gap(this.clock() - this.answeredAt);
    } else if (type === "result") this.endStreak();
    this.answeredAt = undefined;
  }

  /**
   * An answer to a call was sent. `alone`: the pass is the only one in its process (others
   * interleave their requests, and a gap says nothing). `live`: whether polling still makes
   * sense (the process has not ended).
   */
  answered(alone: boolean, live: () => boolean): void {
    this.answeredAt = this.clock();
    if (!alone) {
      this.endStreak();
      return;
    }
    if (this.quickCalls >= QUICK_CALLS_TO_POLL) this.poll(live);
  }

  /** Whether this side polls now (for tests). */
  get isPolling(): boolean {
    return this.polling;
  }

  /** The time from an answer to the next request: a quick one adds to the streak, slow ones end it. */
  private gap(gapMs: number): void {
    if (gapMs <= POLL_MS) {
      this.quickCalls++;
      this.slowCalls = 0;
    } else if (this.quickCalls < QUICK_CALLS_TO_POLL || ++this.slowCalls >= SLOW_CALLS_TO_STOP) this.endStreak();
  }

  private endStreak(): void {
    this.quickCalls = 0;
    this.slowCalls = 0;
  }

  /**
   * Polls from now for `POLL_MS`, or until the next message. A poll still turning from the answer
   * before is given this answer's window rather than left alone: it would end at its next turn,
   * on the request that this answer replied to, and this answer's next request would find the
   * thread asleep.
   */
  private poll(live: () => boolean): void {
    this.pollUntil = this.clock() + POLL_MS;
    this.pollSeen = this.received;
    if (this.polling) return;
    this.polling = true;
    const turn = () => {
      if (this.received !== this.pollSeen || this.clock() >= this.pollUntil || !live()) {
        this.polling = false;
        return;
      }
      setImmediate(turn);
    };
    setImmediate(turn);
  }
}
