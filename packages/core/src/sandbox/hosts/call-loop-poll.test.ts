import { describe, expect, it } from "vitest";
import { CallLoopPoll, POLL_MS, QUICK_CALLS_TO_POLL } from "./call-loop-poll.js";

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
