/**
 * What the storage stories share: a Map-like Keyv adapter that counts (and can fail) what the
 * runtime asks of it, an "inventory" connector whose effects the stories compare with the log,
 * the programs they run, and runtimes closed after each test.
 */
import { createCodemodeRuntime, defineConnector, type ExecutionState } from "@codemode/core";
import Keyv from "keyv";
import { expect } from "vitest";
import { closeKeptRuntimesAfterEach, keep } from "./runtime-fixtures.ts";

// ---------------------------------------------------------------------------------------------
// A Map-like Keyv adapter that counts what the runtime asks of it.

export interface StoreCounts {
  get: number;
  set: number;
  delete: number;
  getMany: number;
  setMany: number;
  deleteMany: number;
}

export class CountingStore {
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

export interface Effect {
  method: string;
  args: unknown;
  seq: number;
  executionId: string;
}

export function inventoryConnector(effects: Effect[]) {
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

/** Reads `calls` items one after another and returns their total count. */
export const readsProgram = (calls: number) => `async () => {
  let total = 0;
  for (let i = 0; i < ${calls}; i++) {
    const item = await inventory.read({ key: "item-" + i });
    total += item.count;
  }
  return total;
}`;

/** Reads `reads` items, then reserves one (needs approval). */
export const readsThenReserveProgram = (reads: number) => `async () => {
  let total = 0;
  for (let i = 0; i < ${reads}; i++) total += (await inventory.read({ key: "item-" + i })).count;
  const reservation = await inventory.reserve({ key: "item-0" });
  return { total, reservation: reservation.reservation };
}`;

/** The limits every storage story's runtime runs with. */
export const LIMITS = { timeoutMs: 20_000 };

/** Every effect that happened is in the log; every entry recorded as applied happened. */
export function expectLogConsistentWithEffects(state: ExecutionState, effects: Effect[]): void {
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
export async function withUnhandledRejectionSpy(body: () => Promise<void>): Promise<unknown[]> {
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

/** Runs `body` and expects no promise rejection to have gone unhandled meanwhile; answers what `body` answered. */
export async function withoutStrayRejections<T>(body: () => Promise<T>): Promise<T> {
  let answer: T | undefined;
  const rejections = await withUnhandledRejectionSpy(async () => {
    answer = await body();
  });
  expect(rejections).toEqual([]);
  return answer as T;
}

/** Keeps `runtime` to be closed after the test. */
export const track = keep;

/** Closes, after each test of the file, every runtime `track` kept. */
export const closeRuntimesAfterEach = closeKeptRuntimesAfterEach;

/**
 * A runtime over `store` (a new counting store by default) with the inventory connector, closed
 * after the test: the store, the effects that really ran, and the runtime.
 */
export function inventoryRuntime(store: CountingStore = new CountingStore(), keyv: Keyv = new Keyv({ store })) {
  const effects: Effect[] = [];
  const runtime = track(
    createCodemodeRuntime({ connectors: [inventoryConnector(effects)], storage: keyv, limits: LIMITS }),
  );
  return { store, effects, runtime };
}
