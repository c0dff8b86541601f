import { describe, expect, it } from "vitest";
import { nextTurn, onNextTurn } from "./event-loop-turn.js";

const busy = (ms: number) => {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // Work that holds the thread, as starting an isolate does.
  }
};

describe("isolate work starts from the event loop's check phase", () => {
  it("R-SB-3: work queued by work runs on the next turn, after the timers due meanwhile", async () => {
    const order: string[] = [];
    await new Promise<void>((done) => {
      onNextTurn(() => {
        order.push("first");
        setTimeout(() => order.push("timer"), 0);
        busy(2);
        onNextTurn(() => {
          order.push("queued by first");
          done();
        });
      });
    });
    expect(order).toEqual(["first", "timer", "queued by first"]);
  });

  it("R-SB-3: a turn runs at most about 10 ms of queued work; the rest follows, first in first out, after the due timers", async () => {
    const order: string[] = [];
    const finished = Array.from(
      { length: 6 },
      (_, index) =>
        new Promise<void>((resolve) =>
          onNextTurn(() => {
            order.push(`work ${index}`);
            busy(4);
            resolve();
          }),
        ),
    );
    setTimeout(() => order.push("timer"), 0);
    await Promise.all(finished);
    const timer = order.indexOf("timer");
    // The timer ran before the last work: the slice ended the turn.
    expect(timer).toBeGreaterThanOrEqual(0);
    expect(timer).toBeLessThan(order.length - 1);
    expect(order.filter((item) => item !== "timer")).toEqual([
      "work 0",
      "work 1",
      "work 2",
      "work 3",
      "work 4",
      "work 5",
    ]);
  });

  it("R-SB-3: a piece of work that throws does not keep the others from running", async () => {
    const ran: number[] = [];
    onNextTurn(() => {
      throw new Error("broken");
    });
    onNextTurn(() => ran.push(1));
    await nextTurn();
    expect(ran).toEqual([1]);
  });
});
