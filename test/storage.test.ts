/**
 * Storage stories (R-ST-1, R-ST-2, R-ST-3, R-ST-5): what a pass writes and reads, resuming from
 * the store alone, store failures, per-name namespacing, and the same stories over a real Redis.
 */
import { randomUUID } from "node:crypto";
import { connect } from "node:net";
import {
  type CodemodeRuntime,
  createCodemodeRuntime,
  defineConnector,
  type ExecutionState,
  type Outcome,
} from "@codemode/core";
import KeyvRedis from "@keyv/redis";
import Keyv from "keyv";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";

// ---------------------------------------------------------------------------------------------
// A Map-like Keyv adapter that counts what the runtime asks of it.

interface StoreCounts {
  get: number;
  set: number;
  delete: number;
  getMany: number;
  setMany: number;
  deleteMany: number;
}

class CountingStore {
  readonly data = new Map<string, unknown>();
  counts: StoreCounts = CountingStore.zero();
  /** Characters of serialized values handed to set/setMany. */
  bytesWritten = 0;
  /** Keys written, one per key (setMany counts each entry). */
  keysWritten = 0;
  getKeys: string[] = [];
  getManyKeys: string[][] = [];
  /** Writes (keys) allowed before writes start to throw; undefined: never. */
  writesBeforeFailure: number | undefined;
  /** When set, a write throws only this many times, then the store works again. */
  failingWritesLeft: number | undefined;
  /** Reads of keys matching this throw. */
  failReadsOf: RegExp | undefined;
  /** Keyv assigns its namespace here. */
  namespace: string | undefined;

  constructor(withBatchMethods = true) {
    if (!withBatchMethods) {
      // An adapter that offers only the four required methods: Keyv falls back to one get per key.
      (this as { getMany?: unknown }).getMany = undefined;
      (this as { setMany?: unknown }).setMany = undefined;
      (this as { deleteMany?: unknown }).deleteMany = undefined;
    }
  }

  static zero(): StoreCounts {
    return { get: 0, set: 0, delete: 0, getMany: 0, setMany: 0, deleteMany: 0 };
  }

  resetCounters(): void {
    this.counts = CountingStore.zero();
    this.bytesWritten = 0;
    this.keysWritten = 0;
    this.getKeys = [];
    this.getManyKeys = [];
  }

  private beforeWrite(): void {
    if (this.writesBeforeFailure !== undefined && this.keysWritten >= this.writesBeforeFailure) {
      if (this.failingWritesLeft === undefined) throw new Error("the store is down (write refused)");
      if (this.failingWritesLeft > 0) {
        this.failingWritesLeft -= 1;
        throw new Error("the store is down (write refused)");
      }
    }
  }

  private beforeRead(key: string): void {
    if (this.failReadsOf?.test(key)) throw new Error(`the store is down (read of ${key} refused)`);
  }

  async get(key: string): Promise<unknown> {
    this.counts.get += 1;
    this.getKeys.push(key);
    this.beforeRead(key);
    return this.data.get(key);
  }

  async set(key: string, value: unknown): Promise<boolean> {
    this.counts.set += 1;
    this.beforeWrite();
    this.keysWritten += 1;
    this.bytesWritten += String(value).length;
    this.data.set(key, value);
    return true;
  }

  async delete(key: string): Promise<boolean> {
    this.counts.delete += 1;
    return this.data.delete(key);
  }

  async clear(): Promise<void> {
    this.data.clear();
  }

  async getMany(keys: string[]): Promise<unknown[]> {
    this.counts.getMany += 1;
    this.getManyKeys.push([...keys]);
    for (const key of keys) this.beforeRead(key);
    return keys.map((key) => this.data.get(key));
  }

  async setMany(entries: Array<{ key: string; value: unknown }>): Promise<boolean[]> {
    this.counts.setMany += 1;
    for (const _ of entries) this.beforeWrite();
    for (const { key, value } of entries) {
      this.keysWritten += 1;
      this.bytesWritten += String(value).length;
      this.data.set(key, value);
    }
    return entries.map(() => true);
  }

  async deleteMany(keys: string[]): Promise<boolean> {
    this.counts.deleteMany += 1;
    for (const key of keys) this.data.delete(key);
    return true;
  }
}

// ---------------------------------------------------------------------------------------------
// A small "inventory" connector: reads are ungated, `reserve` needs approval.

interface Effect {
  method: string;
  args: unknown;
  seq: number;
  executionId: string;
}

function inventoryConnector(effects: Effect[]) {
  return defineConnector({
    name: "inventory",
    tools: {
      read: {
        execute: async (args: { key: string }, ctx) => {
          effects.push({ method: "read", args, seq: ctx.seq, executionId: ctx.executionId });
          return { key: args.key, count: 1 };
        },
      },
      reserve: {
        requiresApproval: true,
        execute: async (args: { key: string }, ctx) => {
          effects.push({ method: "reserve", args, seq: ctx.seq, executionId: ctx.executionId });
          return { reservation: `r-${args.key}` };
        },
      },
    },
  });
}

const readsProgram = (calls: number) => `async () => {
  let total = 0;
  for (let i = 0; i < ${calls}; i++) {
    const item = await inventory.read({ key: "item-" + i });
    total += item.count;
  }
  return total;
}`;

const readsThenReserveProgram = (reads: number) => `async () => {
  let total = 0;
  for (let i = 0; i < ${reads}; i++) total += (await inventory.read({ key: "item-" + i })).count;
  const reservation = await inventory.reserve({ key: "item-0" });
  return { total, reservation: reservation.reservation };
}`;

const LIMITS = { timeoutMs: 20_000 };

function expectStatus<S extends Outcome["status"]>(
  outcome: Outcome,
  status: S,
): asserts outcome is Extract<Outcome, { status: S }> {
  if (outcome.status !== status) throw new Error(`expected ${status}, got ${JSON.stringify(outcome).slice(0, 600)}`);
}

/** Every effect that happened is in the log; every entry recorded as applied happened. */
function expectLogConsistentWithEffects(state: ExecutionState, effects: Effect[]): void {
  const effectSeqs = effects.filter((effect) => effect.executionId === state.id).map((effect) => effect.seq);
  const bySeq = new Map(state.log.map((entry) => [entry.seq, entry]));
  for (const seq of effectSeqs) {
    const entry = bySeq.get(seq);
    expect(entry, `the effect at seq ${seq} has a log entry`).toBeDefined();
    expect(["executing", "applied"]).toContain(entry!.state);
  }
  for (const entry of state.log) {
    if (entry.state === "applied") {
      expect(effectSeqs, `log entry ${entry.seq} is applied, so its effect happened`).toContain(entry.seq);
      expect(entry.result).toBeDefined();
    }
    expect(["executing", "applied", "pending", "error"]).toContain(entry.state);
  }
  const seqs = state.log.map((entry) => entry.seq);
  expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
}

/** Collects unhandled rejections while `body` runs (and a few turns after). */
async function withUnhandledRejectionSpy(body: () => Promise<void>): Promise<unknown[]> {
  const rejections: unknown[] = [];
  const onRejection = (reason: unknown) => rejections.push(reason);
  process.on("unhandledRejection", onRejection);
  try {
    await body();
    for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve));
  } finally {
    process.off("unhandledRejection", onRejection);
  }
  return rejections;
}

const runtimes: CodemodeRuntime[] = [];
function track(runtime: CodemodeRuntime): CodemodeRuntime {
  runtimes.push(runtime);
  return runtime;
}
afterEach(async () => {
  for (const runtime of runtimes.splice(0)) await runtime.close();
});

// ---------------------------------------------------------------------------------------------

describe("R-ST-1 recording a call writes that entry, not the whole execution", () => {
  async function bytesPerCall(calls: number): Promise<number> {
    const store = new CountingStore();
    const effects: Effect[] = [];
    const runtime = track(
      createCodemodeRuntime({
        connectors: [inventoryConnector(effects)],
        storage: new Keyv({ store }),
        limits: LIMITS,
      }),
    );
    const outcome = await runtime.execute({ code: readsProgram(calls) });
    expectStatus(outcome, "completed");
    expect(outcome.result).toBe(calls);
    expect(effects).toHaveLength(calls);
    return store.bytesWritten / calls;
  }

  it("bytes written per call stay flat from a 10-call log to a 1,000-call log", async () => {
    const perCallAt10 = await bytesPerCall(10);
    const perCallAt1000 = await bytesPerCall(1000);
    const ratio = perCallAt1000 / perCallAt10;
    console.log(
      `R-ST-1 bytes written per call: ${perCallAt10.toFixed(1)} at 10 calls, ${perCallAt1000.toFixed(1)} at 1,000 calls (ratio ${ratio.toFixed(3)}, target ≤ 1.1)`,
    );
    expect(ratio).toBeLessThanOrEqual(1.1);
  });
});

describe("R-ST-2 a pass reads the log in one batched read", () => {
  async function approvePassReads(reads: number) {
    const store = new CountingStore();
    const effects: Effect[] = [];
    const runtime = track(
      createCodemodeRuntime({
        connectors: [inventoryConnector(effects)],
        storage: new Keyv({ store }),
        limits: LIMITS,
      }),
    );
    const paused = await runtime.execute({ code: readsThenReserveProgram(reads) });
    expectStatus(paused, "paused");
    expect(paused.pending[0]).toMatchObject({ seq: reads, connector: "inventory", method: "reserve" });
    const executionId = paused.executionId;

    store.resetCounters();
    effects.length = 0;
    const done = await runtime.approve({ executionId });
    expectStatus(done, "completed");
    expect(done.result).toEqual({ total: reads, reservation: "r-item-0" });
    // Only the approved call ran; every read replayed from the log.
    expect(effects.map((effect) => effect.method)).toEqual(["reserve"]);

    const entryKey = `:e:${executionId}:`;
    const logLoads = store.getManyKeys.filter((keys) => keys.some((key) => key.includes(entryKey)));
    const entryGets = store.getKeys.filter((key) => key.includes(entryKey));
    const headGets = store.getKeys.filter((key) => key.endsWith(`:h:${executionId}`));
    return { logLoads, entryGets, headGets, gets: store.counts.get, getManys: store.counts.getMany };
  }

  it("pauses after 40 reads, approve loads the whole log with one getMany and replays without store reads", async () => {
    const withFew = await approvePassReads(5);
    const withMany = await approvePassReads(40);
    console.log(
      `R-ST-2 store reads during approve: ${withFew.gets} get + ${withFew.getManys} getMany with 5 replayed calls, ` +
        `${withMany.gets} get + ${withMany.getManys} getMany with 40 replayed calls`,
    );
    expect(withMany.logLoads).toHaveLength(1);
    // The one load covers every recorded seq (40 reads and the pending call).
    const loadedKeys = withMany.logLoads[0]!;
    for (let seq = 0; seq <= 40; seq++)
      expect(loadedKeys.some((key) => key.endsWith(`:${seq}`) && key.includes(":e:"))).toBe(true);
    expect(withMany.entryGets).toEqual([]);
    expect(withMany.headGets).toHaveLength(1);
    // Replayed calls cost no round trip: the reads of a pass do not grow with the calls it replays.
    expect(withMany.gets).toBe(withFew.gets);
    expect(withMany.getManys).toBe(withFew.getManys);
    expect(withFew.logLoads).toHaveLength(1);
  });
});

describe("R-ST-3 a paused execution resumes from the store alone", () => {
  it("pauses on one runtime, which closes; a second runtime over the same Keyv approves and completes", async () => {
    const store = new CountingStore();
    const keyv = new Keyv({ store });
    const firstEffects: Effect[] = [];
    const first = createCodemodeRuntime({
      connectors: [inventoryConnector(firstEffects)],
      storage: keyv,
      limits: LIMITS,
    });
    const paused = await first.execute({ code: readsThenReserveProgram(3) });
    expectStatus(paused, "paused");
    await first.close();

    const secondEffects: Effect[] = [];
    const second = track(
      createCodemodeRuntime({ connectors: [inventoryConnector(secondEffects)], storage: keyv, limits: LIMITS }),
    );
    expect((await second.pending()).items).toEqual([
      {
        executionId: paused.executionId,
        seq: 3,
        connector: "inventory",
        method: "reserve",
        args: { key: "item-0" },
        pauseId: "3.1",
      },
    ]);
    const done = await second.approve({ executionId: paused.executionId, seq: 3, by: "ops" });
    expectStatus(done, "completed");
    expect(done.result).toEqual({ total: 3, reservation: "r-item-0" });
    // The first runtime did the reads and never the reservation; the second only the reservation.
    expect(firstEffects.map((effect) => effect.method)).toEqual(["read", "read", "read"]);
    expect(secondEffects.map((effect) => `${effect.method}@${effect.seq}`)).toEqual(["reserve@3"]);
    const state = await second.execution(paused.executionId);
    expect(state?.status).toBe("completed");
    expect(state?.log.at(-1)).toMatchObject({ seq: 3, state: "applied", decision: { approved: true, by: "ops" } });
  });

  it("resumes over a new Keyv instance on the same backing store (a restart)", async () => {
    const store = new CountingStore();
    const effects: Effect[] = [];
    const first = createCodemodeRuntime({
      connectors: [inventoryConnector(effects)],
      storage: new Keyv({ store }),
      limits: LIMITS,
    });
    const paused = await first.execute({ code: readsThenReserveProgram(2) });
    expectStatus(paused, "paused");
    await first.close();

    const second = track(
      createCodemodeRuntime({
        connectors: [inventoryConnector(effects)],
        storage: new Keyv({ store }),
        limits: LIMITS,
      }),
    );
    const done = await second.approve({ executionId: paused.executionId });
    expectStatus(done, "completed");
    expect(effects.map((effect) => effect.method)).toEqual(["read", "read", "reserve"]);
  });
});

/** The position, among the keys a healthy run writes, of the first value matching `pattern`. */
async function keyPositionOfFirst(pattern: RegExp, code: string): Promise<number> {
  const probe = new CountingStore();
  const values: string[] = [];
  const set = probe.set.bind(probe);
  const setMany = probe.setMany.bind(probe);
  probe.set = async (key: string, value: unknown) => {
    values.push(String(value));
    return set(key, value);
  };
  probe.setMany = async (entries: Array<{ key: string; value: unknown }>) => {
    values.push(...entries.map((entry) => String(entry.value)));
    return setMany(entries);
  };
  const runtime = createCodemodeRuntime({
    connectors: [inventoryConnector([])],
    storage: new Keyv({ store: probe }),
    limits: LIMITS,
  });
  await runtime.execute({ code });
  await runtime.close();
  const position = values.findIndex((value) => pattern.test(value));
  expect(position).toBeGreaterThan(0);
  return position;
}

describe("R-ST-5 a store that fails mid-pass gives STORAGE_ERROR and a consistent record", () => {
  it("a call's result reaches the program before it is stored, but if storing it fails nothing runs after it and the pass ends STORAGE_ERROR", async () => {
    // Fail exactly the write that carries the first call's `applied` entry, whichever way it is
    // written (alone, or in one batch with the next call's write-ahead).
    const store = new CountingStore();
    const effects: Effect[] = [];
    const runtime = track(
      createCodemodeRuntime({
        connectors: [inventoryConnector(effects)],
        storage: new Keyv({ store }),
        limits: LIMITS,
      }),
    );
    const carriesFirstResult = (key: string, value: unknown) =>
      /:e:[^:]+:0$/.test(key) && String(value).includes('\\"state\\":\\"applied\\"');
    const set = store.set.bind(store);
    const setMany = store.setMany.bind(store);
    let refused = 0;
    store.set = async (key: string, value: unknown) => {
      if (carriesFirstResult(key, value) && refused++ === 0) throw new Error("the store is down (write refused)");
      return set(key, value);
    };
    store.setMany = async (entries: Array<{ key: string; value: unknown }>) => {
      if (entries.some(({ key, value }) => carriesFirstResult(key, value)) && refused++ === 0)
        throw new Error("the store is down (write refused)");
      return setMany(entries);
    };
    const outcome = await runtime.execute({ code: readsProgram(3) });
    expectStatus(outcome, "error");
    expect(outcome.code).toBe("STORAGE_ERROR");
    // The first read ran; its result could not be stored, so the second read never ran.
    expect(effects.map((effect) => effect.seq)).toEqual([0]);
    expect(refused).toBe(1);
  });

  it("the store goes down after 15 writes and stays down until the pass ended: STORAGE_ERROR, then the record is readable", async () => {
    const store = new CountingStore();
    const effects: Effect[] = [];
    const runtime = track(
      createCodemodeRuntime({
        connectors: [inventoryConnector(effects)],
        storage: new Keyv({ store }),
        limits: LIMITS,
      }),
    );
    store.writesBeforeFailure = 15;
    let outcome: Outcome | undefined;
    const rejections = await withUnhandledRejectionSpy(async () => {
      outcome = await runtime.execute({ code: readsProgram(20) });
    });
    expect(rejections).toEqual([]);
    expectStatus(outcome!, "error");
    expect(outcome.code).toBe("STORAGE_ERROR");
    expect(outcome.error).toMatch(/store/);
    expect(outcome.executionId).toEqual(expect.any(String));
    expect(effects.length).toBeGreaterThan(0);
    expect(effects.length).toBeLessThan(20);

    store.writesBeforeFailure = undefined;
    const state = await runtime.execution(outcome.executionId);
    expect(state).not.toBeNull();
    // Nothing could record the end of the pass: the execution still reads as running, with no
    // live lease, which is what expiry looks for.
    expect(["running", "error"]).toContain(state!.status);
    expectLogConsistentWithEffects(state!, effects);
  });

  it("one write fails and the store recovers at once: STORAGE_ERROR, recorded as the execution's error", async () => {
    const store = new CountingStore();
    const effects: Effect[] = [];
    const runtime = track(
      createCodemodeRuntime({
        connectors: [inventoryConnector(effects)],
        storage: new Keyv({ store }),
        limits: LIMITS,
      }),
    );
    store.writesBeforeFailure = 12;
    store.failingWritesLeft = 1;
    let outcome: Outcome | undefined;
    const rejections = await withUnhandledRejectionSpy(async () => {
      outcome = await runtime.execute({ code: readsProgram(20) });
    });
    expect(rejections).toEqual([]);
    expectStatus(outcome!, "error");
    expect(outcome.code).toBe("STORAGE_ERROR");
    expect(outcome.calls?.length).toBeGreaterThan(0);

    const state = await runtime.execution(outcome.executionId);
    expect(state).not.toBeNull();
    expect(["running", "error"]).toContain(state!.status);
    if (state!.status === "error") expect(state!.errorCode).toBe("STORAGE_ERROR");
    expectLogConsistentWithEffects(state!, effects);
    // A failed execution is not approvable.
    const again = await runtime.approve({ executionId: outcome.executionId });
    expectStatus(again, "error");
    expect(["NOT_PAUSED", "STORAGE_ERROR"]).toContain(again.code);
  });

  it("the store fails while recording a pause: STORAGE_ERROR, not paused, and the gated call never ran", async () => {
    const store = new CountingStore();
    const effects: Effect[] = [];
    const runtime = track(
      createCodemodeRuntime({
        connectors: [inventoryConnector(effects)],
        storage: new Keyv({ store }),
        limits: LIMITS,
      }),
    );
    // Fail from the write of the pending entry of `reserve` at seq 1 on: its position among the
    // keys written comes from a healthy run of the same program (listing writes move it).
    store.writesBeforeFailure = await keyPositionOfFirst(/\\"state\\":\\"pending\\"/, readsThenReserveProgram(1));
    let outcome: Outcome | undefined;
    const rejections = await withUnhandledRejectionSpy(async () => {
      outcome = await runtime.execute({ code: readsThenReserveProgram(1) });
    });
    expect(rejections).toEqual([]);
    expectStatus(outcome!, "error");
    expect(outcome.code).toBe("STORAGE_ERROR");
    expect(effects.map((effect) => effect.method)).toEqual(["read"]);

    store.writesBeforeFailure = undefined;
    const state = await runtime.execution(outcome.executionId);
    expect(state).not.toBeNull();
    expect(state!.status).not.toBe("paused");
    expect(["running", "error"]).toContain(state!.status);
    expectLogConsistentWithEffects(state!, effects);
    expect((await runtime.pending(outcome.executionId)).items).toEqual([]);
  });

  it("a Keyv created without throwOnErrors whose adapter's get throws: approve is STORAGE_ERROR, not NOT_FOUND", async () => {
    const store = new CountingStore();
    const keyv = new Keyv({ store }); // throwOnErrors defaults to false: Keyv would swallow the failure
    const effects: Effect[] = [];
    const runtime = track(
      createCodemodeRuntime({ connectors: [inventoryConnector(effects)], storage: keyv, limits: LIMITS }),
    );
    const paused = await runtime.execute({ code: readsThenReserveProgram(2) });
    expectStatus(paused, "paused");

    store.failReadsOf = /./;
    let outcome: Outcome | undefined;
    const rejections = await withUnhandledRejectionSpy(async () => {
      outcome = await runtime.approve({ executionId: paused.executionId });
    });
    expect(rejections).toEqual([]);
    expectStatus(outcome!, "error");
    expect(outcome.code).toBe("STORAGE_ERROR");
    expect(outcome.executionId).toBe(paused.executionId);
    expect(effects.map((effect) => effect.method)).toEqual(["read", "read"]);

    // A new execution cannot be started either, and says why.
    const fresh = await runtime.execute({ code: readsProgram(1) });
    expectStatus(fresh, "error");
    expect(fresh.code).toBe("STORAGE_ERROR");

    store.failReadsOf = undefined;
    const done = await runtime.approve({ executionId: paused.executionId });
    expectStatus(done, "completed");
    expect(effects.map((effect) => effect.method)).toEqual(["read", "read", "reserve"]);
  });

  it("an adapter without getMany whose reads of log entries fail: approve is STORAGE_ERROR and nothing runs again", async () => {
    const store = new CountingStore(false);
    const effects: Effect[] = [];
    const runtime = track(
      createCodemodeRuntime({
        connectors: [inventoryConnector(effects)],
        storage: new Keyv({ store }),
        limits: LIMITS,
      }),
    );
    const paused = await runtime.execute({ code: readsThenReserveProgram(3) });
    expectStatus(paused, "paused");

    // The head and the code read fine; the first log entry does not (a flaky connection).
    store.failReadsOf = new RegExp(`:e:${paused.executionId}:0$`);
    const outcome = await runtime.approve({ executionId: paused.executionId });
    expectStatus(outcome, "error");
    expect(outcome.code).toBe("STORAGE_ERROR");
    // The read at seq 0 was applied once; a log missing it must not run it again.
    expect(effects.map((effect) => `${effect.method}@${effect.seq}`)).toEqual(["read@0", "read@1", "read@2"]);

    store.failReadsOf = undefined;
    const done = await runtime.approve({ executionId: paused.executionId });
    expectStatus(done, "completed");
    expect(effects.map((effect) => `${effect.method}@${effect.seq}`)).toEqual([
      "read@0",
      "read@1",
      "read@2",
      "reserve@3",
    ]);
  });
});

describe("the runtime's name namespaces everything in a shared store", () => {
  it("two runtimes with different names over one Keyv do not see each other's executions", async () => {
    const keyv = new Keyv({ store: new CountingStore() });
    const effects: Effect[] = [];
    const shop = track(
      createCodemodeRuntime({ name: "shop", connectors: [inventoryConnector(effects)], storage: keyv, limits: LIMITS }),
    );
    const warehouse = track(
      createCodemodeRuntime({
        name: "warehouse",
        connectors: [inventoryConnector(effects)],
        storage: keyv,
        limits: LIMITS,
      }),
    );

    const shopPaused = await shop.execute({ code: readsThenReserveProgram(1) });
    expectStatus(shopPaused, "paused");
    const warehouseDone = await warehouse.execute({ code: readsProgram(2) });
    expectStatus(warehouseDone, "completed");

    expect((await shop.executions()).items.map((state) => state.id)).toEqual([shopPaused.executionId]);
    expect((await warehouse.executions()).items.map((state) => state.id)).toEqual([warehouseDone.executionId]);
    expect(await warehouse.execution(shopPaused.executionId)).toBeNull();
    expect(await shop.execution(warehouseDone.executionId)).toBeNull();
    expect((await warehouse.pending()).items).toEqual([]);
    expect((await shop.pending()).items.map((action) => action.executionId)).toEqual([shopPaused.executionId]);

    const crossApprove = await warehouse.approve({ executionId: shopPaused.executionId });
    expectStatus(crossApprove, "error");
    expect(crossApprove.code).toBe("NOT_FOUND");
    expect(await warehouse.reject({ executionId: shopPaused.executionId, seq: 1 })).toBe(false);
    expect((await shop.execution(shopPaused.executionId))?.status).toBe("paused");

    const done = await shop.approve({ executionId: shopPaused.executionId });
    expectStatus(done, "completed");
  });
});

// ---------------------------------------------------------------------------------------------
// The same stories over a real Redis.

const REDIS_URL = "redis://127.0.0.1:6379";

/** A PING over a plain socket; true when Redis answers. */
function redisAnswers(): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port: 6379 });
    const finish = (answer: boolean) => {
      socket.destroy();
      resolve(answer);
    };
    socket.setTimeout(2_000, () => finish(false));
    socket.once("error", () => finish(false));
    socket.once("connect", () => socket.write("PING\r\n"));
    socket.once("data", (data) => finish(data.toString().startsWith("+PONG")));
  });
}

/** Wraps a KeyvRedis adapter, counting calls and bytes written; everything else goes to the adapter. */
function countingRedisAdapter(adapter: KeyvRedis<string>) {
  const counts = { get: 0, getMany: 0, set: 0, setMany: 0, bytesWritten: 0, getManyKeys: [] as string[][] };
  const proxy = new Proxy(adapter, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        if (property === "get") counts.get += 1;
        if (property === "getMany") {
          counts.getMany += 1;
          counts.getManyKeys.push([...(args[0] as string[])]);
        }
        if (property === "set") {
          counts.set += 1;
          counts.bytesWritten += String(args[1]).length;
        }
        if (property === "setMany") {
          counts.setMany += 1;
          for (const entry of args[0] as Array<{ value: unknown }>) counts.bytesWritten += String(entry.value).length;
        }
        return (value as (...inner: unknown[]) => unknown).apply(target, args);
      };
    },
    set(target, property, value) {
      return Reflect.set(target, property, value, target);
    },
  });
  return { adapter: proxy, counts };
}

describe("storage over a real Redis at 127.0.0.1:6379", () => {
  let available = false;
  const namespaces: string[] = [];
  const opened: Keyv[] = [];

  beforeAll(async () => {
    available = await redisAnswers();
    if (!available && process.env.CI)
      throw new Error(`Redis is not reachable at ${REDIS_URL}; CI must provide it for these tests`);
  });

  afterAll(async () => {
    if (!available) return;
    // Remove every key the tests wrote (of any type), then close the connections.
    const cleaner = new KeyvRedis<string>(REDIS_URL);
    const client = await cleaner.getClient();
    for (const namespace of namespaces) {
      const keys = await client.keys(`${namespace}::*`);
      if (keys.length > 0) await client.del(keys);
    }
    await cleaner.disconnect();
    for (const keyv of opened) await keyv.disconnect().catch(() => undefined);
  });

  function redisKeyv(namespace: string) {
    const { adapter, counts } = countingRedisAdapter(new KeyvRedis<string>(REDIS_URL));
    const keyv = new Keyv({ store: adapter, namespace, useKeyPrefix: false });
    opened.push(keyv);
    return { keyv, counts };
  }

  function newNamespace(): string {
    const namespace = `codemode-test-${randomUUID()}`;
    namespaces.push(namespace);
    return namespace;
  }

  function skipWithoutRedis(): boolean {
    if (available) return false;
    console.warn("skipped: Redis not reachable");
    return true;
  }

  it("pauses on one connection; after it closes, a new runtime on a new connection approves with one batched log read", async () => {
    if (skipWithoutRedis()) return;
    const namespace = newNamespace();
    const effects: Effect[] = [];
    const firstStore = redisKeyv(namespace);
    const first = createCodemodeRuntime({
      connectors: [inventoryConnector(effects)],
      storage: firstStore.keyv,
      limits: LIMITS,
    });
    const paused = await first.execute({ code: readsThenReserveProgram(40) });
    expectStatus(paused, "paused");
    await first.close();
    await firstStore.keyv.disconnect();

    const secondStore = redisKeyv(namespace);
    const second = track(
      createCodemodeRuntime({ connectors: [inventoryConnector(effects)], storage: secondStore.keyv, limits: LIMITS }),
    );
    expect((await second.pending()).items.map((action) => action.seq)).toEqual([40]);
    const countsBefore = { get: secondStore.counts.get, getMany: secondStore.counts.getMany };
    const done = await second.approve({ executionId: paused.executionId });
    expectStatus(done, "completed");
    expect(done.result).toEqual({ total: 40, reservation: "r-item-0" });
    expect(effects.filter((effect) => effect.method === "reserve")).toHaveLength(1);
    expect(effects.filter((effect) => effect.method === "read")).toHaveLength(40);

    const entryKey = `:e:${paused.executionId}:`;
    const logLoads = secondStore.counts.getManyKeys
      .slice(countsBefore.getMany)
      .filter((keys) => keys.some((key) => key.includes(entryKey)));
    expect(logLoads).toHaveLength(1);
    console.log(
      `Redis approve of 40 replayed calls: ${secondStore.counts.get - countsBefore.get} get, ${secondStore.counts.getMany - countsBefore.getMany} getMany`,
    );

    // The keys live under the test's namespace, prefixed once.
    const raw = new KeyvRedis<string>(REDIS_URL);
    const client = await raw.getClient();
    const keys = await client.keys(`${namespace}::cm:default:h:*`);
    expect(keys).toEqual([`${namespace}::cm:default:h:${paused.executionId}`]);
    expect(await client.keys(`${namespace}::${namespace}*`)).toEqual([]);
    await raw.disconnect();
  });

  it("bytes written per call stay flat from 10 to 1,000 calls over Redis", async () => {
    if (skipWithoutRedis()) return;
    const perCall = async (calls: number) => {
      const { keyv, counts } = redisKeyv(newNamespace());
      const effects: Effect[] = [];
      const runtime = track(
        createCodemodeRuntime({ connectors: [inventoryConnector(effects)], storage: keyv, limits: LIMITS }),
      );
      const outcome = await runtime.execute({ code: readsProgram(calls) });
      expectStatus(outcome, "completed");
      expect(outcome.result).toBe(calls);
      const state = await runtime.execution(outcome.executionId);
      expect(state?.log).toHaveLength(calls);
      return counts.bytesWritten / calls;
    };
    const perCallAt10 = await perCall(10);
    const perCallAt1000 = await perCall(1000);
    const ratio = perCallAt1000 / perCallAt10;
    console.log(
      `R-ST-1 over Redis, bytes written per call: ${perCallAt10.toFixed(1)} at 10 calls, ${perCallAt1000.toFixed(1)} at 1,000 calls (ratio ${ratio.toFixed(3)})`,
    );
    expect(ratio).toBeLessThanOrEqual(1.1);
  });

  it("an error reply from Redis while reading an execution is STORAGE_ERROR, not NOT_FOUND", async () => {
    if (skipWithoutRedis()) return;
    const namespace = newNamespace();
    const effects: Effect[] = [];
    // KeyvRedis keeps its own throwOnErrors off by default: an error reply would read as a missing key.
    const { keyv } = redisKeyv(namespace);
    const runtime = track(
      createCodemodeRuntime({ connectors: [inventoryConnector(effects)], storage: keyv, limits: LIMITS }),
    );
    const paused = await runtime.execute({ code: readsThenReserveProgram(1) });
    expectStatus(paused, "paused");

    // Replace the execution's head with a list: GET answers WRONGTYPE, a real Redis error reply.
    const raw = new KeyvRedis<string>(REDIS_URL);
    const client = await raw.getClient();
    const headKey = `${namespace}::cm:default:h:${paused.executionId}`;
    const head = await client.get(headKey);
    expect(head).not.toBeNull();
    await client.del(headKey);
    await client.lPush(headKey, "not a string");
    try {
      const outcome = await runtime.approve({ executionId: paused.executionId });
      expectStatus(outcome, "error");
      expect(outcome.code).toBe("STORAGE_ERROR");
    } finally {
      await client.del(headKey);
      await client.set(headKey, head!);
      await raw.disconnect();
    }
    const done = await runtime.approve({ executionId: paused.executionId });
    expectStatus(done, "completed");
    expect(effects.map((effect) => effect.method)).toEqual(["read", "reserve"]);
  });
});
