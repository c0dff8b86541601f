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

describe("polling for the next call of a loop (R-SB-8)", () => {
  it(`polls once ${QUICK_CALLS_TO_POLL} calls in a row came within ${POLL_MS} ms of their answers, not before`, () => {
    const clock = handClock();
    const poll = new CallLoopPoll(clock.read);
    poll.message("request");
    poll.answered(true, live);
    calls(poll, clock, QUICK_CALLS_TO_POLL - 1, POLL_MS / 4);
    expect(poll.isPolling).toBe(false);
    calls(poll, clock, 1, POLL_MS / 4);
    expect(poll.isPolling).toBe(true);
  });

  it("a slow call, a result or a second pass in the process ends the streak", () => {
    for (const interruption of ["slow", "result", "shared"] as const) {
      const clock = handClock();
      const poll = new CallLoopPoll(clock.read);
      poll.message("request");
      poll.answered(true, live);
      calls(poll, clock, QUICK_CALLS_TO_POLL - 1, POLL_MS / 4);
      if (interruption === "slow") calls(poll, clock, 1, POLL_MS * 2);
      if (interruption === "result") poll.message("result");
      if (interruption === "shared") poll.answered(false, live);
      calls(poll, clock, 1, POLL_MS / 4);
      expect(poll.isPolling, interruption).toBe(false);
    }
  });

  it(`once it polls, a slow call keeps the streak; ${SLOW_CALLS_TO_STOP} slow calls in a row end it`, async () => {
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
    for (let call = 1; call < QUICK_CALLS_TO_POLL; call++) expect(await polls(POLL_MS / 4)).toBe(false);
    expect(await polls(POLL_MS / 4)).toBe(true);
    // One slow call (the loop's process lost its core for a moment), then a quick one: still polling.
    expect(await polls(POLL_MS * 2)).toBe(true);
    expect(await polls(POLL_MS / 4)).toBe(true);
    // Slow calls short of the limit, a quick one between them: the count of slow ones starts over.
    for (let round = 0; round < 3; round++) {
      for (let slow = 1; slow < SLOW_CALLS_TO_STOP; slow++) expect(await polls(POLL_MS * 2)).toBe(true);
      expect(await polls(POLL_MS / 4)).toBe(true);
    }
    // The limit in a row ends the streak: quick calls start it again from nothing.
    for (let slow = 1; slow < SLOW_CALLS_TO_STOP; slow++) expect(await polls(POLL_MS * 2)).toBe(true);
    expect(await polls(POLL_MS * 2)).toBe(false);
    expect(await polls(POLL_MS / 4)).toBe(false);
  });

  it("an answer sent while the poll after the answer before still turns polls for its own next request", async () => {
    const clock = handClock();
    const poll = new CallLoopPoll(clock.read);
    poll.message("request");
    poll.answered(true, live);
    calls(poll, clock, QUICK_CALLS_TO_POLL, 0);
    expect(poll.isPolling).toBe(true);
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
    const clock = handClock();
    const poll = new CallLoopPoll(clock.read);
    poll.message("request");
    poll.answered(true, live);
    calls(poll, clock, QUICK_CALLS_TO_POLL, 0);
    expect(poll.isPolling).toBe(true);
    // The hand clock stands still: only a message ends this poll.
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(poll.isPolling).toBe(true);
    poll.message("request");
    await turn();
    expect(poll.isPolling).toBe(false);
  });

  it(`a poll ends after ${POLL_MS} ms without a message, or when the process has ended`, async () => {
    for (const ending of ["time", "process"] as const) {
      const clock = handClock();
      const poll = new CallLoopPoll(clock.read);
      let alive = true;
      poll.message("request");
      poll.answered(true, () => alive);
      calls(poll, clock, QUICK_CALLS_TO_POLL, 0, () => alive);
      expect(poll.isPolling, ending).toBe(true);
      await turn();
      expect(poll.isPolling, ending).toBe(true);
      if (ending === "time") clock.advance(POLL_MS);
      else alive = false;
      await turn();
      expect(poll.isPolling, ending).toBe(false);
    }
  });
});
