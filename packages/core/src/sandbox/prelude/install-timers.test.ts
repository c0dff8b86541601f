import { describe, expect, it } from "vitest";
import { installTimers } from "./install-timers.js";
import { partRealm } from "./part-realm-fixtures.js";

/**
 * A fresh realm with the timers installed from their source text. Each timer request waits for
 * `fire(index)`, standing in for the host's pass-scoped timer service.
 */
function timersInFreshRealm() {
  const { global, load, intrinsics, read } = partRealm();
  const requests: Array<{ request: Record<string, unknown>; fire: () => void }> = [];
  const send = (request: Record<string, unknown>) =>
    new Promise<unknown>((resolve) => requests.push({ request, fire: () => resolve("") }));
  load(installTimers)(intrinsics, global, send);
  const fire = async (index: number) => {
    requests[index]!.fire();
    await new Promise((resolve) => setImmediate(resolve));
  };
  return { requests, fire, read };
}

describe("installTimers", () => {
  it("a timer is a request to the host's timer service, with its delay in whole milliseconds", async () => {
    const { requests, fire, read } = timersInFreshRealm();
    read(
      "globalThis.seen = []; setTimeout((a, b) => seen.push(a + b), 12.7, 'x', 'y'); setTimeout(() => seen.push('soon'), -5)",
    );
    expect(requests.map(({ request }) => request)).toEqual([
      { type: "service", name: "__timer", args: "12" },
      { type: "service", name: "__timer", args: "0" },
    ]);
    await fire(1);
    await fire(0);
    expect(read("seen")).toEqual(["soon", "xy"]);
  });

  it("clearTimeout makes the host's later reply a no-op", async () => {
    const { fire, read } = timersInFreshRealm();
    read("globalThis.seen = []; const id = setTimeout(() => seen.push('fired'), 10); clearTimeout(id)");
    await fire(0);
    expect(read("seen")).toEqual([]);
  });

  it("setInterval asks again each time it fires, until cleared", async () => {
    const { requests, fire, read } = timersInFreshRealm();
    read("globalThis.seen = 0; globalThis.id = setInterval(() => { seen++; if (seen === 2) clearInterval(id); }, 5)");
    await fire(0);
    await fire(1);
    expect(requests).toHaveLength(3);
    await fire(2);
    expect(read("seen")).toBe(2);
  });

  it("queueMicrotask runs before any timer; non-functions are refused", async () => {
    const { fire, read } = timersInFreshRealm();
    read("globalThis.seen = []; setTimeout(() => seen.push('timer'), 0); queueMicrotask(() => seen.push('microtask'))");
    await fire(0);
    expect(read("seen")).toEqual(["microtask", "timer"]);
    expect(read("try { setTimeout('code') } catch (error) { error.message }")).toBe(
      "the timer callback must be a function",
    );
    expect(read("try { queueMicrotask(1) } catch (error) { error.message }")).toBe("queueMicrotask needs a function");
  });
});
