/**
 * End-to-end stories of an execution's life around its passes: resource hooks (R-RS-*),
 * retention and expiry (R-RE-*), and control operations racing an approval (R-AP-6, R-ST-4).
 */
import { randomUUID } from "node:crypto";
import {
  type CodemodeRuntime,
  type CodemodeRuntimeOptions,
  type Connector,
  createCodemodeRuntime,
  defineConnector,
  type ToolDefinition,
} from "@codemode/core";
import type { ExecutionIndex, LockProvider } from "@codemode/core/store";
import { memoryStorage } from "@codemode/storage/memory";
import Keyv from "keyv";
import { afterEach, describe, expect, it, vi } from "vitest";

const runtimes: CodemodeRuntime[] = [];

afterEach(async () => {
  vi.restoreAllMocks();
  await Promise.all(runtimes.splice(0).map((runtime) => runtime.close()));
});

function runtimeWith(options: CodemodeRuntimeOptions): CodemodeRuntime {
  const runtime = createCodemodeRuntime(options);
  runtimes.push(runtime);
  return runtime;
}

/** One hook call as a connector saw it: "shop.onPassEnd(paused)". */
interface HookCall {
  event: string;
  executionId: string;
}

/** A connector whose hooks write into `calls`, so a story can check which hooks ran, in what order. */
function hooked(name: string, calls: HookCall[], tools: Record<string, ToolDefinition> = {}): Connector {
  return defineConnector({
    name,
    tools: { ping: { execute: () => "pong" }, ...tools },
    onPassEnd: (executionId, status) => {
      calls.push({ event: `${name}.onPassEnd(${status})`, executionId });
    },
    disposeExecution: (executionId, status) => {
      calls.push({ event: `${name}.disposeExecution(${status})`, executionId });
    },
  });
}

const events = (calls: HookCall[]) => calls.map((call) => call.event);

/** A shop whose `create_order` needs approval and counts how often it really ran. */
function shopTools(counter: { orders: number }): Record<string, ToolDefinition> {
  return {
    list_items: { execute: () => [{ id: 1, name: "pen" }] },
    create_order: {
      requiresApproval: true,
      execute: () => {
        counter.orders += 1;
        return { orderId: `o-${counter.orders}` };
      },
      revert: () => undefined,
    },
  };
}

const ORDER_CODE = `async () => {
  const items = await shop.list_items();
  const order = await shop.create_order({ item: items[0].id });
  return order.orderId;
}`;

/** A promise the test opens by hand, to hold a tool call (and so its pass and lease) in flight. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  let markStarted!: () => void;
  const started = new Promise<void>((resolve) => (markStarted = resolve));
  return { open, opened, started, markStarted };
}

/**
 * Moves the host clock forward, as waiting would, without waiting: only `Date.now` is shifted,
 * and only between operations (no pass runs while it moves).
 */
function shiftableClock() {
  const realNow = Date.now.bind(Date);
  let offsetMs = 0;
  vi.spyOn(Date, "now").mockImplementation(() => realNow() + offsetMs);
  return {
    advance(ms: number) {
      offsetMs += ms;
    },
  };
}

const HOUR = 60 * 60 * 1000;

describe("R-RS-1 onPassEnd after every pass", () => {
  it("R-RS-1: pauses at create_order, approve, completes — every configured connector, also the unused mail, hears each pass end, and on the terminal pass before disposeExecution", async () => {
    const calls: HookCall[] = [];
    const counter = { orders: 0 };
    const runtime = runtimeWith({ connectors: [hooked("shop", calls, shopTools(counter)), hooked("mail", calls)] });

    const paused = await runtime.execute({ code: ORDER_CODE });
    expect(paused.status).toBe("paused");
    expect(events(calls)).toEqual(["shop.onPassEnd(paused)", "mail.onPassEnd(paused)"]);

    const completed = await runtime.approve({ executionId: paused.executionId });
    expect(completed).toMatchObject({ status: "completed", result: "o-1" });
    expect(events(calls)).toEqual([
      "shop.onPassEnd(paused)",
      "mail.onPassEnd(paused)",
      "shop.onPassEnd(completed)",
      "mail.onPassEnd(completed)",
      "shop.disposeExecution(completed)",
      "mail.disposeExecution(completed)",
    ]);
    expect(new Set(calls.map((call) => call.executionId))).toEqual(new Set([paused.executionId]));
  });

  it("R-RS-1 R-RS-2: a program that throws ends error; the hooks hear error, onPassEnd first", async () => {
    const calls: HookCall[] = [];
    const runtime = runtimeWith({ connectors: [hooked("shop", calls), hooked("mail", calls)] });

    const outcome = await runtime.execute({
      code: `async () => { await shop.ping(); throw new Error("out of stock"); }`,
    });

    expect(outcome).toMatchObject({ status: "error", code: "PROGRAM_ERROR" });
    expect(events(calls)).toEqual([
      "shop.onPassEnd(error)",
      "mail.onPassEnd(error)",
      "shop.disposeExecution(error)",
      "mail.disposeExecution(error)",
    ]);
  });

  it("R-RS-1 R-RS-2 R-SB-2: code with a syntax error is still an execution with one pass: SYNTAX_ERROR, and the hooks hear error", async () => {
    const calls: HookCall[] = [];
    const runtime = runtimeWith({ connectors: [hooked("shop", calls)] });

    const outcome = await runtime.execute({ code: "async () => { return shop.ping( }" });

    expect(outcome).toMatchObject({ status: "error", code: "SYNTAX_ERROR" });
    expect((await runtime.execution(outcome.executionId))?.status).toBe("error");
    expect(calls).toEqual([
      { event: "shop.onPassEnd(error)", executionId: outcome.executionId },
      { event: "shop.disposeExecution(error)", executionId: outcome.executionId },
    ]);
  });
});

describe("R-RS-2 disposeExecution when an execution becomes terminal, never on a pause", () => {
  it("R-RS-2: a program with two approvals pauses twice without being disposed, and is disposed once when it completes", async () => {
    const calls: HookCall[] = [];
    const counter = { orders: 0 };
    const runtime = runtimeWith({ connectors: [hooked("shop", calls, shopTools(counter))] });
    const disposals = () => events(calls).filter((event) => event.includes("disposeExecution"));

    const first = await runtime.execute({
      code: `async () => { await shop.create_order({ n: 1 }); await shop.create_order({ n: 2 }); return "two orders"; }`,
    });
    expect(first.status).toBe("paused");
    const second = await runtime.approve({ executionId: first.executionId });
    expect(second.status).toBe("paused");
    expect(disposals()).toEqual([]);

    const done = await runtime.approve({ executionId: first.executionId });
    expect(done).toMatchObject({ status: "completed", result: "two orders" });
    expect(events(calls)).toEqual([
      "shop.onPassEnd(paused)",
      "shop.onPassEnd(paused)",
      "shop.onPassEnd(completed)",
      "shop.disposeExecution(completed)",
    ]);
  });

  it("R-RS-2 R-AP-4: rejecting the pending order disposes the execution as rejected, without running onPassEnd again", async () => {
    const calls: HookCall[] = [];
    const runtime = runtimeWith({
      connectors: [hooked("shop", calls, shopTools({ orders: 0 })), hooked("mail", calls)],
    });

    const paused = await runtime.execute({ code: ORDER_CODE });
    expect(paused.status).toBe("paused");
    expect(await runtime.reject({ executionId: paused.executionId, seq: 1 })).toBe(true);

    expect(events(calls)).toEqual([
      "shop.onPassEnd(paused)",
      "mail.onPassEnd(paused)",
      "shop.disposeExecution(rejected)",
      "mail.disposeExecution(rejected)",
    ]);
  });

  it("R-RS-2 R-RB-3: rolling back a completed run disposes it again as rolled_back", async () => {
    const calls: HookCall[] = [];
    const runtime = runtimeWith({ connectors: [hooked("shop", calls, shopTools({ orders: 0 }))] });

    const paused = await runtime.execute({ code: ORDER_CODE });
    await runtime.approve({ executionId: paused.executionId });
    const report = await runtime.rollback({ executionId: paused.executionId });

    expect(report).toMatchObject({ status: "rolled_back", reverted: [1] });
    expect(events(calls)).toEqual([
      "shop.onPassEnd(paused)",
      "shop.onPassEnd(completed)",
      "shop.disposeExecution(completed)",
      "shop.disposeExecution(rolled_back)",
    ]);
  });

  it("R-RS-2 R-RE-2: a paused run that expires is disposed as rejected", async () => {
    const calls: HookCall[] = [];
    const clock = shiftableClock();
    const runtime = runtimeWith({ connectors: [hooked("shop", calls, shopTools({ orders: 0 }))] });

    const paused = await runtime.execute({ code: ORDER_CODE });
    clock.advance(1);
    expect(await runtime.expirePaused({ maxAgeMs: 0 })).toEqual([paused.executionId]);

    expect((await runtime.execution(paused.executionId))?.status).toBe("rejected");
    expect(events(calls)).toEqual(["shop.onPassEnd(paused)", "shop.disposeExecution(rejected)"]);
  });

  it("R-RS-2 R-RE-3: deleting a paused run disposes it; deleting a finished one does not dispose it twice", async () => {
    const calls: HookCall[] = [];
    const runtime = runtimeWith({ connectors: [hooked("shop", calls, shopTools({ orders: 0 }))] });

    const paused = await runtime.execute({ code: ORDER_CODE });
    expect(await runtime.deleteExecution(paused.executionId)).toBe(true);
    expect(calls).toEqual([
      { event: "shop.onPassEnd(paused)", executionId: paused.executionId },
      { event: "shop.disposeExecution(rejected)", executionId: paused.executionId },
    ]);

    calls.length = 0;
    const finished = await runtime.execute({ code: "async () => shop.ping()" });
    expect(await runtime.deleteExecution(finished.executionId)).toBe(true);
    expect(events(calls)).toEqual(["shop.onPassEnd(completed)", "shop.disposeExecution(completed)"]);
  });
});

describe("R-RS-3 hooks never fail an execution and run wherever the execution ends", () => {
  it("R-RS-3: onPassEnd and disposeExecution that throw leave the run completed and are reported through the logger", async () => {
    const warnings: string[] = [];
    const later: string[] = [];
    const fragile = defineConnector({
      name: "fragile",
      tools: { ping: { execute: () => "pong" } },
      onPassEnd: () => {
        throw new Error("pass-end boom");
      },
      disposeExecution: async () => {
        throw new Error("dispose boom");
      },
    });
    // A connector configured after the throwing one still gets its hooks.
    const steady = defineConnector({
      name: "steady",
      tools: { ping: { execute: () => "pong" } },
      onPassEnd: (_id, status) => void later.push(`onPassEnd(${status})`),
      disposeExecution: (_id, status) => void later.push(`disposeExecution(${status})`),
    });
    const runtime = runtimeWith({
      connectors: [fragile, steady],
      logger: { warn: (message) => warnings.push(message) },
    });

    const outcome = await runtime.execute({ code: "async () => { await fragile.ping(); return 42; }" });

    expect(outcome).toMatchObject({ status: "completed", result: 42 });
    expect((await runtime.execution(outcome.executionId))?.status).toBe("completed");
    expect(later).toEqual(["onPassEnd(completed)", "disposeExecution(completed)"]);
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toMatch(/onPassEnd of connector "fragile".*pass-end boom/);
    expect(warnings[1]).toMatch(/disposeExecution of connector "fragile".*dispose boom/);
    expect(warnings.every((warning) => warning.includes(outcome.executionId))).toBe(true);
  });

  it("R-RS-3 R-ST-3: paused on runtime A, approved on runtime B over the same Keyv: B's hooks run, A's do not", async () => {
    const keyv = new Keyv();
    const onA: HookCall[] = [];
    const onB: HookCall[] = [];
    const countA = { orders: 0 };
    const countB = { orders: 0 };
    const runtimeA = runtimeWith({ storage: keyv, connectors: [hooked("shop", onA, shopTools(countA))] });
    const runtimeB = runtimeWith({ storage: keyv, connectors: [hooked("shop", onB, shopTools(countB))] });

    const paused = await runtimeA.execute({ code: ORDER_CODE });
    expect(paused.status).toBe("paused");
    const completed = await runtimeB.approve({ executionId: paused.executionId });

    expect(completed).toMatchObject({ status: "completed", result: "o-1" });
    expect(countB.orders).toBe(1);
    expect(countA.orders).toBe(0);
    expect(events(onA)).toEqual(["shop.onPassEnd(paused)"]);
    expect(onB).toEqual([
      { event: "shop.onPassEnd(completed)", executionId: paused.executionId },
      { event: "shop.disposeExecution(completed)", executionId: paused.executionId },
    ]);
  });
});

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

/**
 * A lock whose leases the test can make lapse, as a lease does when the host holding it dies and
 * stops renewing it; the lapsed holder's renewals then fail, as they would against a real store.
 */
function lapsableLock() {
  const held = new Map<string, string>();
  const provider: LockProvider = {
    async acquire(key, { waitMs }) {
      const deadline = Date.now() + waitMs;
      while (held.has(key)) {
        if (Date.now() >= deadline) return null;
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
      const token = randomUUID();
      held.set(key, token);
      return {
        token,
        async renew() {
          return held.get(key) === token;
        },
        async release() {
          if (held.get(key) === token) held.delete(key);
        },
      };
    },
    async isHeld(key) {
      return held.has(key);
    },
  };
  return {
    provider,
    /** The lease on this execution lapses: its holder is taken for dead. */
    lapse(executionId: string) {
      for (const key of held.keys()) if (key.endsWith(`:lock:${executionId}`)) held.delete(key);
    },
  };
}

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

describe("R-AP-6 control operations racing an approval in one process", () => {
  async function pausedOrder(options: Partial<CodemodeRuntimeOptions> = {}) {
    const calls: HookCall[] = [];
    const counter = { orders: 0 };
    const runtime = runtimeWith({ connectors: [hooked("shop", calls, shopTools(counter))], ...options });
    const paused = await runtime.execute({ code: ORDER_CODE });
    expect(paused.status).toBe("paused");
    return { runtime, counter, calls, executionId: paused.executionId };
  }

  it("R-AP-6: two approvals at once place the order once: one completes, the other gets NOT_PAUSED", async () => {
    const { runtime, counter, executionId } = await pausedOrder();

    const [first, second] = await Promise.all([runtime.approve({ executionId }), runtime.approve({ executionId })]);

    expect(counter.orders).toBe(1);
    expect(first).toMatchObject({ status: "completed", result: "o-1" });
    expect(second).toMatchObject({ status: "error", code: "NOT_PAUSED" });
  });

  it("R-AP-6: approve racing rollback — whichever comes first wins, the order runs at most once, the record agrees", async () => {
    {
      const { runtime, counter, executionId } = await pausedOrder();
      const [approved, report] = await Promise.all([
        runtime.approve({ executionId }),
        runtime.rollback({ executionId }),
      ]);
      expect(approved).toMatchObject({ status: "completed", result: "o-1" });
      expect(counter.orders).toBe(1);
      // The rollback waited for the pass and then reverted the order it placed.
      expect(report).toMatchObject({ status: "rolled_back", reverted: [1], skipped: [0], failed: [] });
      expect((await runtime.execution(executionId))?.log.map((entry) => entry.state)).toEqual(["applied", "reverted"]);
    }
    {
      const { runtime, counter, calls, executionId } = await pausedOrder();
      const [report, approved] = await Promise.all([
        runtime.rollback({ executionId }),
        runtime.approve({ executionId }),
      ]);
      // Only list_items was applied and it has no revert: nothing reverted, the run stays paused...
      expect(report).toMatchObject({ status: "paused", reverted: [], skipped: [0] });
      // ...so the approval that came second still resumes it, once.
      expect(approved).toMatchObject({ status: "completed", result: "o-1" });
      expect(counter.orders).toBe(1);
      expect(events(calls).filter((event) => event.includes("dispose"))).toEqual(["shop.disposeExecution(completed)"]);
    }
  });

  it("R-AP-6 R-RB-3: rolling back a paused run that applied a revertible call ends it; an approval racing behind gets NOT_PAUSED and the order never runs", async () => {
    const calls: HookCall[] = [];
    const counter = { orders: 0 };
    const reverted: unknown[] = [];
    const runtime = runtimeWith({
      connectors: [
        hooked("shop", calls, {
          ...shopTools(counter),
          reserve: { execute: () => ({ reservation: "r-1" }), revert: (_args, result) => void reverted.push(result) },
        }),
      ],
    });
    const paused = await runtime.execute({
      code: `async () => { await shop.reserve({ item: 1 }); return shop.create_order({ item: 1 }); }`,
    });
    const executionId = paused.executionId;

    const [report, approved] = await Promise.all([runtime.rollback({ executionId }), runtime.approve({ executionId })]);

    expect(report).toMatchObject({ status: "rolled_back", reverted: [0], skipped: [], failed: [] });
    expect(approved).toMatchObject({ status: "error", code: "NOT_PAUSED" });
    expect(counter.orders).toBe(0);
    expect(reverted).toEqual([{ reservation: "r-1" }]);
    expect((await runtime.pending(executionId)).items).toEqual([]);
    expect(events(calls)).toEqual(["shop.onPassEnd(paused)", "shop.disposeExecution(rolled_back)"]);
  });

  it("R-AP-6: approve racing reject — the first decision stands, the order runs at most once", async () => {
    {
      const { runtime, counter, executionId } = await pausedOrder();
      const [approved, rejected] = await Promise.all([
        runtime.approve({ executionId }),
        runtime.reject({ executionId, seq: 1 }),
      ]);
      expect(approved.status).toBe("completed");
      expect(rejected).toBe(false);
      expect(counter.orders).toBe(1);
      expect((await runtime.execution(executionId))?.status).toBe("completed");
    }
    {
      const { runtime, counter, executionId } = await pausedOrder();
      const [rejected, approved] = await Promise.all([
        runtime.reject({ executionId, seq: 1 }),
        runtime.approve({ executionId }),
      ]);
      expect(rejected).toBe(true);
      expect(approved).toMatchObject({ status: "error", code: "NOT_PAUSED" });
      expect(counter.orders).toBe(0);
      expect((await runtime.execution(executionId))?.status).toBe("rejected");
    }
  });

  it("R-AP-6: approve racing deleteExecution — deleted first means NOT_FOUND and no order; approved first means one order, then the finished run is deleted", async () => {
    {
      const { runtime, counter, calls, executionId } = await pausedOrder();
      const [deleted, approved] = await Promise.all([
        runtime.deleteExecution(executionId),
        runtime.approve({ executionId }),
      ]);
      expect(deleted).toBe(true);
      expect(approved).toMatchObject({ status: "error", code: "NOT_FOUND" });
      expect(counter.orders).toBe(0);
      expect(events(calls)).toEqual(["shop.onPassEnd(paused)", "shop.disposeExecution(rejected)"]);
    }
    {
      const { runtime, counter, calls, executionId } = await pausedOrder();
      const [approved, deleted] = await Promise.all([
        runtime.approve({ executionId }),
        runtime.deleteExecution(executionId),
      ]);
      expect(approved).toMatchObject({ status: "completed", result: "o-1" });
      expect(deleted).toBe(true);
      expect(counter.orders).toBe(1);
      expect(await runtime.execution(executionId)).toBeNull();
      expect(events(calls).filter((event) => event.includes("dispose"))).toEqual(["shop.disposeExecution(completed)"]);
    }
  });

  it("R-AP-6 R-RE-2: approve racing expirePaused — the order runs at most once and the record matches who won", async () => {
    const clock = shiftableClock();
    for (const expiryFirst of [true, false]) {
      const { runtime, counter, calls, executionId } = await pausedOrder();
      clock.advance(2 * HOUR);
      const expiry = () => runtime.expirePaused({ maxAgeMs: HOUR });
      const approval = () => runtime.approve({ executionId });
      const [expired, approved] = expiryFirst
        ? await Promise.all([expiry(), approval()])
        : await Promise.all([approval(), expiry()]).then(([outcome, ids]) => [ids, outcome] as const);

      const status = (await runtime.execution(executionId))?.status;
      const disposals = events(calls).filter((event) => event.includes("dispose"));
      if (expired.includes(executionId)) {
        expect(approved).toMatchObject({ status: "error", code: "NOT_PAUSED" });
        expect(counter.orders).toBe(0);
        expect(status).toBe("rejected");
        expect(disposals).toEqual(["shop.disposeExecution(rejected)"]);
      } else {
        expect(approved).toMatchObject({ status: "completed", result: "o-1" });
        expect(counter.orders).toBe(1);
        expect(status).toBe("completed");
        expect(disposals).toEqual(["shop.disposeExecution(completed)"]);
      }
      expect(expired.filter((id) => id !== executionId)).toEqual([]);
    }
  });

  it("R-AP-6 R-ST-4: while a pass holds the execution, rollback, approve, delete and expiry give up after lockWaitMs and say BUSY (as data, or delete as a BUSY rejection)", async () => {
    const inFlight = gate();
    const counter = { orders: 0 };
    const runtime = runtimeWith({
      lockWaitMs: 50,
      connectors: [
        hooked("shop", [], {
          ...shopTools(counter),
          sync: {
            execute: async () => {
              inFlight.markStarted();
              await inFlight.opened;
              return "synced";
            },
            revert: () => undefined,
          },
        }),
      ],
    });

    const outcome = runtime.execute({
      code: `async () => { await shop.sync(); return shop.create_order({ item: 1 }); }`,
    });
    await inFlight.started;
    const [running] = (await runtime.executions()).items;
    const executionId = running!.id;

    const report = await runtime.rollback({ executionId });
    expect(report).toMatchObject({ executionId, code: "BUSY", reverted: [], failed: [], skipped: [] });
    const approved = await runtime.approve({ executionId });
    expect(approved.status).toBe("error");
    expect(approved.status === "error" && ["BUSY", "NOT_PAUSED"].includes(approved.code)).toBe(true);
    // "false" would read as "no such execution": a busy one rejects with BUSY (R-RT-3).
    await expect(runtime.deleteExecution(executionId)).rejects.toMatchObject({ name: "CodemodeError", code: "BUSY" });
    expect(await runtime.expirePaused({ maxAgeMs: 0 })).toEqual([]);
    expect((await runtime.execution(executionId))?.status).toBe("running");

    inFlight.open();
    expect(await outcome).toMatchObject({ status: "paused", executionId });
    expect(await runtime.approve({ executionId })).toMatchObject({ status: "completed", result: { orderId: "o-1" } });
    expect(counter.orders).toBe(1);
  });
});
