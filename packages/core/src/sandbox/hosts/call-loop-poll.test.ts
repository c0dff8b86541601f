import { describe, expect, it } from "vitest";
import { CallLoopPoll, POLL_MS, QUICK_CALLS_TO_POLL, SLOW_CALLS_TO_STOP } from "./call-loop-poll.js";

/** A clock the test moves by hand. */
function handClock() {
  let now = 1_000;
  return { read: () => now, advance: (ms: number) => (now += ms) };
}

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));
const live = () => true;

/** `count` calls, each asked `gapMs` after the answer to the one before, all answered. */
function calls(
  poll: CallLoopPoll,
  clock: ReturnType<typeof handClock>,
  count: number,
  gapMs: number,
  isLive: () => boolean = live,
): void {
  for (let call = 0; call < count; call++) {
    clock.advance(gapMs);
    poll.message("request");
    poll.answered(true, isLive);
  }
}

/** A pass whose first call has just been answered: that answer polls. */
function pollingPass(isLive: () => boolean = live) {
  const clock = handClock();
  const poll = new CallLoopPoll(clock.read);
  poll.message("request");
  poll.answered(true, isLive);
  expect(poll.isPolling).toBe(true);
  return { clock, poll };
}

describe("polling for the next message of a pass (R-SB-8)", () => {
  it(`polls from a pass's first answer; ${SLOW_CALLS_TO_STOP} slow calls in a row stop it, ${QUICK_CALLS_TO_POLL} quick ones or the next pass start it again`, async () => {
    const clock = handClock();
    const poll = new CallLoopPoll(clock.read);
    let alive = true;
    /** One call after any poll in course has ended: whether its answer polls. */
    const polls = async (gapMs: number) => {
      alive = false;
      await turn();
      alive = true;
      calls(poll, clock, 1, gapMs, () => alive);
      return poll.isPolling;
    };
    poll.message("request");
    poll.answered(true, () => alive);
    expect(poll.isPolling).toBe(true);
    expect(await polls(POLL_MS / 4)).toBe(true);
    // One slow call (a collection, a process that lost its core for a moment): still polling.
    expect(await polls(POLL_MS * 2)).toBe(true);
    expect(await polls(POLL_MS / 4)).toBe(true);
    // Slow calls short of the limit, a quick one between them: the count of slow ones starts over.
    for (let round = 0; round < 3; round++) {
      for (let slow = 1; slow < SLOW_CALLS_TO_STOP; slow++) expect(await polls(POLL_MS * 2)).toBe(true);
      expect(await polls(POLL_MS / 4)).toBe(true);
    }
    // The limit in a row: a program that works between its calls. No more polling...
    for (let slow = 1; slow < SLOW_CALLS_TO_STOP; slow++) expect(await polls(POLL_MS * 2)).toBe(true);
    expect(await polls(POLL_MS * 2)).toBe(false);
    // ...until quick calls in a row, one short of them not enough...
    for (let quick = 1; quick < QUICK_CALLS_TO_POLL; quick++) expect(await polls(POLL_MS / 4)).toBe(false);
    expect(await polls(POLL_MS / 4)).toBe(true);
    // ...or the pass's end: the next pass polls from its first answer.
    for (let slow = 0; slow < SLOW_CALLS_TO_STOP; slow++) await polls(POLL_MS * 2);
    expect(await polls(POLL_MS * 2)).toBe(false);
    poll.message("result");
    expect(await polls(POLL_MS * 2)).toBe(true);
  });

  it("an answer of a pass that shares its process does not poll", () => {
    const poll = new CallLoopPoll(handClock().read);
    for (let call = 0; call < QUICK_CALLS_TO_POLL * 2; call++) {
      poll.message("request");
      poll.answered(false, live);
      expect(poll.isPolling, `call ${call}`).toBe(false);
    }
  });

  it("an answer sent while the poll after the answer before still turns polls for its own next request", async () => {
    const { clock, poll } = pollingPass();
    // The next request comes and is answered before the poll's next turn: that turn sees the
    // request, and must go on polling for the one after rather than end.
    for (let call = 0; call < 5; call++) {
      poll.message("request");
      poll.answered(true, live);
      await turn();
      expect(poll.isPolling, `call ${call}`).toBe(true);
    }
    // Its window is the new answer's: it ends POLL_MS after it.
    clock.advance(POLL_MS);
    await turn();
    expect(poll.isPolling).toBe(false);
  });

  it("a poll keeps the event loop turning (a timer fires meanwhile) and ends at the next message", async () => {
    const { poll } = pollingPass();
    // The hand clock stands still: only a message ends this poll.
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(poll.isPolling).toBe(true);
    poll.message("request");
    await turn();
    expect(poll.isPolling).toBe(false);
  });

  it(`a poll ends after ${POLL_MS} ms without a message, or when the process has ended`, async () => {
    for (const ending of ["time", "process"] as const) {
      let alive = true;
      const { clock, poll } = pollingPass(() => alive);
      await turn();
      expect(poll.isPolling, ending).toBe(true);
      if (ending === "time") clock.advance(POLL_MS);
      else alive = false;
      await turn();
      expect(poll.isPolling, ending).toBe(false);
    }
  });
});
