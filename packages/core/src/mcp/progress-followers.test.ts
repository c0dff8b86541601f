import { afterEach, describe, expect, it } from "vitest";
import type { ExecutionState, LogEntry } from "../outcome.js";
import type { ProgressNote } from "./progress.js";
import { createProgressFollowers, type ProgressFollowers } from "./progress-followers.js";

const call = (seq: number, state: LogEntry["state"]): LogEntry => ({
  seq,
  connector: "shop",
  method: "order",
  args: {},
  requiresApproval: true,
  state,
  startedAt: 0,
});

const run = (id: string, status: ExecutionState["status"], log: LogEntry[]): ExecutionState => ({
  id,
  code: "",
  status,
  log,
  connectors: ["shop"],
  createdAt: 0,
  updatedAt: 0,
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A store of runs whose reads are counted, per run. */
function countingRuntime(states: Map<string, ExecutionState | Error>) {
  const reads = new Map<string, number>();
  return {
    reads,
    total: () => [...reads.values()].reduce((sum, value) => sum + value, 0),
    runtime: {
      async execution(id: string) {
        reads.set(id, (reads.get(id) ?? 0) + 1);
        const state = states.get(id);
        if (state instanceof Error) throw state;
        return state ?? null;
      },
    },
  };
}

function listener() {
  const notes: ProgressNote[] = [];
  return {
    notes,
    send: async (note: ProgressNote) => void notes.push(note),
    messages: () => notes.map((n) => n.message),
  };
}

let followers: ProgressFollowers | undefined;
afterEach(() => followers?.close());

describe("issue 43: progress followers share their reads and are bounded", () => {
  it("two followers of one run: one watch, the run read once per poll, each hears every note numbered from 1", async () => {
    const states = new Map<string, ExecutionState | Error>([["a", run("a", "running", [call(0, "executing")])]]);
    const store = countingRuntime(states);
    followers = createProgressFollowers({ runtime: store.runtime, pollMs: 20 });
    const first = listener();
    const second = listener();
    followers.follow({ executionId: "a", owner: {}, send: first.send, maxFollowMs: 60_000 });
    followers.follow({ executionId: "a", owner: {}, send: second.send, maxFollowMs: 60_000 });
    expect(followers.watches()).toBe(1);
    expect(followers.followers()).toBe(2);
    await sleep(30);
    states.set("a", run("a", "completed", [call(0, "applied")]));
    for (let wait = 0; wait < 200 && followers.followers() > 0; wait++) await sleep(10);
    expect(first.messages()).toEqual(["call started: shop.order (seq 0)", "call ended: shop.order (seq 0, applied)"]);
    expect(second.messages()).toContain("call ended: shop.order (seq 0, applied)");
    expect(second.notes.map((note) => note.progress)).toEqual(second.notes.map((_, index) => index + 1));
    expect(followers.followers()).toBe(0);
    expect(followers.watches()).toBe(0);
    // Shared: the reads are those of one poller, not two.
    expect(store.reads.get("a")).toBeLessThanOrEqual(4);
  });

  it("250 paused runs: reads stay within the shared budget however many wait, and each pause is said once", async () => {
    const states = new Map<string, ExecutionState | Error>();
    for (let index = 0; index < 250; index++) states.set(`r${index}`, run(`r${index}`, "paused", [call(0, "pending")]));
    const store = countingRuntime(states);
    followers = createProgressFollowers({
      runtime: store.runtime,
      pausedPollMs: 5,
      maxPausedPollMs: 20,
      pausedReadsPerSecond: 50,
      maxFollowersPerOwner: 1_000,
    });
    const client = {};
    const heard = listener();
    for (const id of states.keys())
      followers.follow({ executionId: id, owner: client, send: heard.send, maxFollowMs: 60_000 });
    await sleep(50);
    // The first read of each run is at once; from then on only the budget counts (a tick is 20 ms).
    expect(store.total()).toBeGreaterThanOrEqual(250);
    expect(store.total()).toBeLessThanOrEqual(254);
    const before = store.total();
    await sleep(400);
    const later = store.total() - before;
    expect(later).toBeGreaterThanOrEqual(1);
    expect(later).toBeLessThanOrEqual(22); // 50 per second for 0.4 s, and one tick of slack
    expect(heard.messages().filter((message) => message.startsWith("paused:"))).toHaveLength(250);
    expect(followers.followers()).toBe(250);
  });

  it("a paused run approved elsewhere is followed to its end once read again; backoff doubles while it waits", async () => {
    const states = new Map<string, ExecutionState | Error>([["p", run("p", "paused", [call(0, "pending")])]]);
    const store = countingRuntime(states);
    followers = createProgressFollowers({
      runtime: store.runtime,
      pollMs: 5,
      pausedPollMs: 20,
      maxPausedPollMs: 1_000,
      pausedReadsPerSecond: 1_000,
    });
    const heard = listener();
    followers.follow({ executionId: "p", owner: {}, send: heard.send, maxFollowMs: 60_000 });
    await sleep(170);
    // Read at 0, then 20, 60 and 140 ms later: four reads, not the 8 a steady 20 ms poll would make.
    expect(store.reads.get("p")).toBeGreaterThanOrEqual(2);
    expect(store.reads.get("p")).toBeLessThanOrEqual(5);
    states.set("p", run("p", "completed", [call(0, "applied")]));
    for (let wait = 0; wait < 100 && followers.followers() > 0; wait++) await sleep(20);
    expect(heard.messages()).toEqual([
      "call started: shop.order (seq 0)",
      "paused: waiting for approval of shop.order (seq 0)",
      "call ended: shop.order (seq 0, applied)",
    ]);
    expect(followers.watches()).toBe(0);
  });

  it("caps per connection and per server: the task beyond them hears once that it is not followed", async () => {
    const states = new Map<string, ExecutionState | Error>();
    for (let index = 0; index < 6; index++) states.set(`c${index}`, run(`c${index}`, "paused", [call(0, "pending")]));
    followers = createProgressFollowers({
      runtime: countingRuntime(states).runtime,
      maxFollowersPerOwner: 2,
      maxFollowers: 3,
    });
    const one = {};
    const other = {};
    const refused = listener();
    const follow = (id: string, owner: object, send = listener().send) =>
      followers?.follow({ executionId: id, owner, send, maxFollowMs: 60_000 });
    expect(follow("c0", one)).toBe(true);
    expect(follow("c1", one)).toBe(true);
    expect(follow("c2", one, refused.send)).toBe(false);
    expect(follow("c3", other)).toBe(true);
    expect(follow("c4", other, refused.send)).toBe(false);
    await sleep(10);
    expect(refused.messages()).toEqual([
      "progress: not followed (this connection follows 2 runs, the most it may); poll tasks/get",
      "progress: not followed (this server follows 3 runs, the most it may); poll tasks/get",
    ]);
    followers.release(one);
    expect(followers.followers()).toBe(1);
    expect(follow("c4", other)).toBe(true);
  });

  it("a store outage does not end a follower: it reads again and hears the rest of the run", async () => {
    const states = new Map<string, ExecutionState | Error>([["o", new Error("ECONNREFUSED")]]);
    followers = createProgressFollowers({
      runtime: countingRuntime(states).runtime,
      pollMs: 5,
      pausedPollMs: 10,
      maxPausedPollMs: 10,
      pausedReadsPerSecond: 1_000,
    });
    const heard = listener();
    followers.follow({ executionId: "o", owner: {}, send: heard.send, maxFollowMs: 60_000 });
    await sleep(40);
    expect(followers.followers()).toBe(1);
    states.set("o", run("o", "completed", [call(0, "applied")]));
    for (let wait = 0; wait < 100 && followers.followers() > 0; wait++) await sleep(10);
    expect(heard.messages()).toEqual(["call started: shop.order (seq 0)", "call ended: shop.order (seq 0, applied)"]);
  });

  it("a send that fails ends that follower only; a run that is gone ends them all", async () => {
    const states = new Map<string, ExecutionState | Error>([["g", run("g", "running", [call(0, "executing")])]]);
    followers = createProgressFollowers({ runtime: countingRuntime(states).runtime, pollMs: 5 });
    const kept = listener();
    followers.follow({ executionId: "g", owner: {}, send: kept.send, maxFollowMs: 60_000 });
    followers.follow({
      executionId: "g",
      owner: {},
      send: async () => {
        throw new Error("Not connected");
      },
      maxFollowMs: 60_000,
    });
    for (let wait = 0; wait < 200 && followers.followers() > 1; wait++) await sleep(10);
    expect(followers.followers()).toBe(1);
    states.delete("g");
    for (let wait = 0; wait < 200 && followers.followers() > 0; wait++) await sleep(10);
    expect(followers.followers()).toBe(0);
    expect(kept.messages()).toEqual(["call started: shop.order (seq 0)"]);
  });
});

describe("issue 43: a running run's reads back off while it waits", () => {
  it("a running run waiting on a slow call is read less and less often, and at once again once it moves", async () => {
    const states = new Map<string, ExecutionState | Error>([["s", run("s", "running", [call(0, "executing")])]]);
    const store = countingRuntime(states);
    followers = createProgressFollowers({ runtime: store.runtime, pollMs: 10, maxRunningPollMs: 80 });
    const heard = listener();
    followers.follow({ executionId: "s", owner: {}, send: heard.send, maxFollowMs: 60_000 });
    await sleep(400);
    // At a steady 10 ms it would be 40 reads; backing off 10, 20, 40, 80, 80… it is about 8.
    const slow = store.reads.get("s") ?? 0;
    expect(slow).toBeGreaterThanOrEqual(2);
    expect(slow).toBeLessThanOrEqual(12);
    states.set("s", run("s", "completed", [call(0, "applied")]));
    for (let wait = 0; wait < 50 && followers.followers() > 0; wait++) await sleep(10);
    expect(heard.messages()).toEqual(["call started: shop.order (seq 0)", "call ended: shop.order (seq 0, applied)"]);
  });
});
