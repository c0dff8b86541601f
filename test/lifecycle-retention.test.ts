/**
 * An execution's life after its passes: retention (R-RE-1: the oldest finished runs pruned, paused
 * ones kept), expiry of paused runs and of passes whose host died (R-RE-2, R-ST-4), and deletion
 * (R-RE-3).
 */
import type { ExecutionIndex } from "@codemode/core/store";
import { memoryStorage } from "@codemode/storage/memory";
import Keyv from "keyv";
import { describe, expect, it, vi } from "vitest";
import {
  closeRuntimesAfterEach,
  events,
  gate,
  HOUR,
  type HookCall,
  hooked,
  lapsableLock,
  ORDER_CODE,
  runtimeWith,
  shiftableClock,
  shopTools,
} from "./lifecycle-fixtures.ts";

closeRuntimesAfterEach();

describe("R-RE-1 retention", () => {
  it("R-RE-1: with maxExecutions 3, the oldest finished run disappears with all its keys, a paused one stays, and pruneExecutions(keep) returns how many went", async () => {
    const map = new Map<string, unknown>();
    const keyv = new Keyv({ store: map });
    const runtime = runtimeWith({
      storage: keyv,
      maxExecutions: 3,
      connectors: [hooked("shop", [], shopTools({ orders: 0 }))],
    });
    const keysOf = (executionId: string) => [...map.keys()].filter((key) => key.includes(executionId));

    const paused = await runtime.execute({ code: ORDER_CODE });
    expect(paused.status).toBe("paused");
    const finished: string[] = [];
    for (let index = 0; index < 5; index++) {
      const outcome = await runtime.execute({ code: `async () => { await shop.list_items(); return ${index}; }` });
      expect(outcome.status).toBe("completed");
      finished.push(outcome.executionId);
    }
    const [first, second, ...newest] = finished as [string, string, ...string[]];

    // Each start keeps the newest 3 finished runs besides itself: the 5th start removed the 1st.
    expect(await runtime.execution(first)).toBeNull();
    expect(keysOf(first)).toEqual([]);
    expect([...map.values()].some((value) => String(value).includes(first))).toBe(false);
    expect((await runtime.execution(second))?.log).toHaveLength(1);
    expect(keysOf(second).length).toBeGreaterThanOrEqual(4); // head, code, result, one log entry
    expect((await runtime.executions()).items.map((state) => state.id)).toEqual(
      [...newest].reverse().concat(second, paused.executionId),
    );

    expect(await runtime.pruneExecutions(1)).toBe(3);
    for (const executionId of [second, ...newest.slice(0, 2)]) {
      expect(await runtime.execution(executionId)).toBeNull();
      expect(keysOf(executionId)).toEqual([]);
    }
    expect((await runtime.executions()).items.map((state) => ({ id: state.id, status: state.status }))).toEqual([
      { id: newest[2], status: "completed" },
      { id: paused.executionId, status: "paused" },
    ]);
    expect(keysOf(paused.executionId).length).toBeGreaterThanOrEqual(3);

    // Nothing more to remove; the paused run is never pruned, even with keep 0.
    expect(await runtime.pruneExecutions(1)).toBe(0);
    expect(await runtime.pruneExecutions(0)).toBe(1);
    expect((await runtime.pending()).items.map((action) => action.executionId)).toEqual([paused.executionId]);
  });

  it("R-RE-1: an execution waits for one pruning round that starts after it was stored, never for the rounds later executions ask for", async () => {
    // Every pruning round starts by counting: each count waits until the test opens its gate.
    // An execution asks for a round right after it is listed.
    const gates: Array<() => void> = [];
    let listed = 0;
    const base = memoryStorage();
    const storage = {
      keyv: base.keyv,
      lock: base.lock,
      index: {
        forRuntime(name: string): ExecutionIndex {
          const index = base.index.forRuntime(name);
          return {
            put: async (row, previous) => {
              await index.put(row, previous);
              if (previous === undefined) listed += 1;
            },
            remove: (row) => index.remove(row),
            list: (query) => index.list(query),
            count: async (statuses) => {
              await new Promise<void>((resolve) => gates.push(resolve));
              return index.count(statuses);
            },
          };
        },
      },
    };
    const runtime = runtimeWith({
      storage,
      maxExecutions: 1,
      connectors: [hooked("shop", [], shopTools({ orders: 0 }))],
    });
    const ended: string[] = [];
    const run = (name: string) =>
      runtime.execute({ code: `async () => "${name}"` }).then((outcome) => {
        ended.push(name);
        return outcome;
      });

    const first = run("first");
    await vi.waitFor(() => expect(gates).toHaveLength(1)); // round 1 runs (for the first)
    const second = run("second");
    const third = run("third");
    await vi.waitFor(() => expect(listed).toBe(3)); // both asked while round 1 runs: round 2 is queued for them
    gates[0]!();
    expect((await first).status).toBe("completed"); // without waiting for round 2
    await vi.waitFor(() => expect(gates).toHaveLength(2)); // round 2 runs
    const fourth = run("fourth");
    await vi.waitFor(() => expect(listed).toBe(4)); // asked while round 2 runs: round 3 is queued
    expect(ended).toEqual(["first"]);
    gates[1]!();
    expect((await second).status).toBe("completed");
    expect((await third).status).toBe("completed"); // without waiting for round 3
    await vi.waitFor(() => expect(gates).toHaveLength(3));
    // The second and third waited for round 2 together (in either order); the fourth waits for round 3.
    expect([ended[0], ...ended.slice(1).sort()]).toEqual(["first", "second", "third"]);
    gates[2]!();
    expect((await fourth).status).toBe("completed");
    // The rounds kept retention: round 3 left one finished run, besides the fourth if it ended after that count.
    expect((await runtime.executions()).items.length).toBeLessThanOrEqual(2);
  });
});

describe("R-RE-2 R-RE-3 expiry and deletion", () => {
  it("R-RE-2: a paused run older than maxAgeMs becomes rejected and is disposed; a fresh one stays paused", async () => {
    const calls: HookCall[] = [];
    const clock = shiftableClock();
    const counter = { orders: 0 };
    const runtime = runtimeWith({ connectors: [hooked("shop", calls, shopTools(counter))] });

    const old = await runtime.execute({ code: ORDER_CODE });
    clock.advance(2 * HOUR);
    const fresh = await runtime.execute({ code: ORDER_CODE });
    calls.length = 0;

    expect(await runtime.expirePaused({ maxAgeMs: 24 * HOUR })).toEqual([]);
    expect(await runtime.expirePaused({ maxAgeMs: HOUR })).toEqual([old.executionId]);

    const expired = await runtime.execution(old.executionId);
    expect(expired?.status).toBe("rejected");
    expect(expired?.log.map((entry) => entry.state)).toEqual(["applied", "error"]);
    expect((await runtime.execution(fresh.executionId))?.status).toBe("paused");
    expect(calls).toEqual([{ event: "shop.disposeExecution(rejected)", executionId: old.executionId }]);
    expect((await runtime.pending()).items.map((action) => action.executionId)).toEqual([fresh.executionId]);
    expect(await runtime.approve({ executionId: old.executionId })).toMatchObject({
      status: "error",
      code: "NOT_PAUSED",
    });
    expect(counter.orders).toBe(0);
  });

  it("R-RE-2 R-ST-4: a running pass whose host died (its lease lapsed) is ended as error by another runtime and disposed there; the zombie pass cannot overwrite that", async () => {
    // Honest simulation of a dead host: runtime A really runs a pass that is stuck inside a tool
    // call, so the store holds a `running` head and an `executing` entry; then A's lease lapses,
    // which is what the lock sees when a host stops renewing. Runtime B shares store and lock.
    const keyv = new Keyv();
    const lock = lapsableLock();
    const stuck = gate();
    const onB: HookCall[] = [];
    const slowShop = (calls: HookCall[]) =>
      hooked("shop", calls, {
        sync: {
          execute: async () => {
            stuck.markStarted();
            await stuck.opened;
            return "synced";
          },
        },
      });
    const runtimeA = runtimeWith({ storage: { keyv, lock: lock.provider }, connectors: [slowShop([])] });
    const runtimeB = runtimeWith({
      storage: { keyv, lock: lock.provider },
      connectors: [slowShop(onB)],
      lockWaitMs: 50,
    });

    const zombie = runtimeA.execute({ code: "async () => shop.sync()" });
    await stuck.started;
    const [running] = (await runtimeB.executions()).items;
    expect(running?.status).toBe("running");

    // While A's lease is live, its run is left alone.
    expect(await runtimeB.expirePaused({ maxAgeMs: 24 * HOUR })).toEqual([]);
    lock.lapse(running!.id);
    expect(await runtimeB.expirePaused({ maxAgeMs: 24 * HOUR })).toEqual([running!.id]);

    const ended = await runtimeB.execution(running!.id);
    expect(ended).toMatchObject({ status: "error", errorCode: "SANDBOX_ERROR" });
    expect(ended?.log.map((entry) => entry.state)).toEqual(["executing"]);
    expect(onB).toEqual([{ event: "shop.disposeExecution(error)", executionId: running!.id }]);

    // The host "comes back": its late pass must not turn the expired run into a completed one.
    stuck.open();
    const late = await zombie;
    expect(late).toMatchObject({ status: "error", executionId: running!.id });
    expect((await runtimeB.execution(running!.id))?.status).toBe("error");
  });

  it("R-RE-2 R-ST-4: a pass that runs longer than a short leaseMs keeps renewing its lease, so expiry leaves it running", async () => {
    // The only test here that waits: the lease must outlive several of its own lengths.
    const slow = gate();
    const runtime = runtimeWith({
      leaseMs: 300,
      connectors: [
        hooked("shop", [], {
          sync: {
            execute: async () => {
              slow.markStarted();
              await slow.opened;
              return "synced";
            },
          },
        }),
      ],
    });

    const outcome = runtime.execute({ code: "async () => shop.sync()" });
    await slow.started;
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const expired = await runtime.expirePaused({ maxAgeMs: 0 });
    slow.open();

    expect(expired).toEqual([]);
    expect(await outcome).toMatchObject({ status: "completed", result: "synced" });
  });

  it("R-RE-3: deleting a paused run removes it and its pending action; deleting an unknown id returns false", async () => {
    const calls: HookCall[] = [];
    const runtime = runtimeWith({ connectors: [hooked("shop", calls, shopTools({ orders: 0 }))] });

    const paused = await runtime.execute({ code: ORDER_CODE });
    expect(await runtime.deleteExecution(paused.executionId)).toBe(true);

    expect(await runtime.execution(paused.executionId)).toBeNull();
    expect((await runtime.pending()).items).toEqual([]);
    expect((await runtime.executions()).items).toEqual([]);
    expect(events(calls)).toEqual(["shop.onPassEnd(paused)", "shop.disposeExecution(rejected)"]);
    expect(await runtime.deleteExecution(paused.executionId)).toBe(false);
    expect(await runtime.deleteExecution("no-such-execution")).toBe(false);
    expect(await runtime.approve({ executionId: paused.executionId })).toMatchObject({
      status: "error",
      code: "NOT_FOUND",
    });
  });
});
