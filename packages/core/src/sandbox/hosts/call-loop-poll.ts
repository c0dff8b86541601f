/**
 * The runtime's side of a pass that calls tools, in a sandbox process.
 *
 * Between two calls of a program, the runtime's thread has nothing to do for a few tens of
 * microseconds: it goes to sleep, and the next request has to wake it, which on a virtual machine
 * can cost as much as the call itself. So after answering a call of a pass alone in its process,
 * this side polls for the next message instead of sleeping: a turn of the event loop at a time
 * (setImmediate), so the loop keeps serving everything else (timers, sockets, other passes) as it
 * would, and stops at the next message from the process, after `POLL_MS`, or when the process
 * has ended. It costs at most `POLL_MS` of this thread's time per answer. A program that works
 * between its calls longer than that wastes it, so `SLOW_CALLS_TO_STOP` slow calls in a row (each
 * asked more than `POLL_MS` after the answer before) stop polling, and `QUICK_CALLS_TO_POLL`
 * quick ones in a row, or the next pass, start it again. One slow call does not stop it: a
 * collection, or a process that lost its core for a moment, says nothing of the program.
 *
 * The sandbox process does its part the other way round: it spins for the reply to a call
 * (sandbox-process.ts, `SpinPolicy`).
 */

/** How long after answering a call this side polls for the next message; also what counts as quick. */
export const POLL_MS = 0.2;
/** Slow calls in a row that stop polling: a program that works between its calls. */
export const SLOW_CALLS_TO_STOP = 3;
/** Quick calls in a row that start polling again once slow calls stopped it. */
export const QUICK_CALLS_TO_POLL = 8;

export class CallLoopPoll {
  /** When the last answer to a call was sent (performance.now()), until the next message comes. */
  private answeredAt: number | undefined;
  /** Whether an answer polls: from a pass's first, until slow calls stop it. */
  private polls = true;
  /** Calls in a row asked within POLL_MS of the answer before them (quick), and later (slow). */
  private quickCalls = 0;
  private slowCalls = 0;
  /** Messages received from the process in all: a poll ends when this moves. */
  private received = 0;
  private polling = false;
  /** What ends the current poll: a message after the `pollSeen`th, or the clock reaching `pollUntil`. */
  private pollSeen = 0;
  private pollUntil = 0;

  constructor(private readonly clock: () => number = () => performance.now()) {}

  /** A message came from the process: a request is counted as quick or slow, a result starts afresh. */
  message(type: string): void {
    this.received++;
    if (type === "request") {
      if (this.answeredAt !== undefined) this.gap(this.clock() - this.answeredAt);
    } else if (type === "result") {
      this.polls = true;
      this.quickCalls = 0;
      this.slowCalls = 0;
    }
    this.answeredAt = undefined;
  }

  /**
   * An answer to a call was sent. `alone`: the pass is the only one in its process (with others,
   * their messages keep this side busy anyway). `live`: whether polling still makes sense (the
   * process has not ended).
   */
  answered(alone: boolean, live: () => boolean): void {
    this.answeredAt = this.clock();
    if (alone && this.polls) this.poll(live);
  }

  /** Whether this side polls now (for tests). */
  get isPolling(): boolean {
    return this.polling;
  }

  /** The time from an answer to the next request: slow ones in a row stop polling, quick ones start it. */
  private gap(gapMs: number): void {
    if (gapMs <= POLL_MS) {
      this.slowCalls = 0;
      this.quickCalls++;
      if (!this.polls && this.quickCalls >= QUICK_CALLS_TO_POLL) this.polls = true;
    } else {
      this.quickCalls = 0;
      this.slowCalls++;
      if (this.polls && this.slowCalls >= SLOW_CALLS_TO_STOP) this.polls = false;
    }
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
