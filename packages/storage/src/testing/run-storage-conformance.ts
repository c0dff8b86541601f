import { randomUUID } from "node:crypto";
import {
  type CodemodeRuntime,
  type CodemodeRuntimeOptions,
  createCodemodeRuntime,
  defineConnector,
  type Outcome,
} from "@codemode/core";
import type { ExecutionIndexProvider, KeyvLike, Lease, LockProvider } from "@codemode/core/store";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { countingKeyv, countingLock } from "./counting-keyv.js";

/** A storage as the suite sees it: any Keyv instance, a lock, and a way to close it. */
export interface StorageUnderTest {
  keyv: KeyvLike;
  lock: LockProvider;
  /** The store's native listing, if it has one: fenced puts are checked on it. */
  index?: ExecutionIndexProvider;
  close(): Promise<void>;
}

export interface StorageConformanceOptions {
  /**
   * Whether every call of the factory reaches the same data (a server or a file), as two
   * processes would. Turns on the stories that open a second storage. Default true; false for a
   * store that lives in one object's memory.
   */
  shared?: boolean;
  /**
   * Why the backend cannot be reached right now, or undefined when it can. With `CI` set in the
   * environment a reason fails the suite; elsewhere each story prints it and returns early.
   */
  unavailable?: () => Promise<string | undefined> | string | undefined;
  /** Makes the backend fail for this storage, mid-pass or between calls. Default: `storage.close()`. */
  breakStorage?: (storage: StorageUnderTest) => Promise<void>;
  /**
   * Whether the store's leases offer the fenced write (`Lease.setIfHeld`: the lease check and the
   * write in one store operation). Turns on the stories that hold it to that. Default false.
   */
  fenced?: boolean;
  /**
   * Removes a lease from the backend behind its holder's back, as a failover that lost the key
   * or an operator who freed it would: the holder still believes it holds it. `key` is as given
   * to `acquire`. Needed by the fencing story that the holder's own clock cannot catch.
   */
  dropLease?: (storage: StorageUnderTest, key: string) => Promise<void>;
}

const LIMITS = { timeoutMs: 20_000 };

/**
 * The storage conformance suite: registers vitest stories that check a store does what the
 * durable runtime relies on — per-entry writes (R-ST-1), one batched log read (R-ST-2), resuming
 * from the store alone (R-ST-3), leases that exclude, lapse and fence (R-ST-4), failures that
 * surface as STORAGE_ERROR and never as "not found" (R-ST-5), namespacing by runtime name, and
 * concurrent approvals that run an action once (R-AP-6). The factory is called once per story
 * (twice for stories about a second process); every story uses its own runtime name and lock
 * keys, so a shared database needs no cleaning between stories.
 *
 * @example
 * // my-store.test.ts
 * import { createInProcessLock } from "@codemode/core/store";
 * import { runStorageConformance } from "@codemode/storage/testing";
 * import Keyv from "keyv";
 *
 * runStorageConformance("my adapter", () => {
 *   const keyv = new Keyv({ store: new MyAdapter(process.env.MY_URL) });
 *   return { keyv, lock: createInProcessLock(), close: () => keyv.disconnect() };
 * });
 */
export function runStorageConformance(
  name: string,
  createStorage: () => StorageUnderTest | Promise<StorageUnderTest>,
  options: StorageConformanceOptions = {},
): void {
  const shared = options.shared ?? true;
  const breakStorage = options.breakStorage ?? ((storage: StorageUnderTest) => storage.close());

  describe(`${name}: storage conformance`, () => {
    let unavailableBecause: string | undefined;
    const opened: StorageUnderTest[] = [];
    const runtimes: CodemodeRuntime[] = [];

    beforeAll(async () => {
      unavailableBecause = await options.unavailable?.();
      if (unavailableBecause && process.env.CI)
        throw new Error(`${name} is not reachable (${unavailableBecause}); CI must provide it`);
    });

    afterEach(async () => {
      for (const runtime of runtimes.splice(0)) await runtime.close().catch(() => undefined);
      for (const storage of opened.splice(0)) await storage.close().catch(() => undefined);
    });

    /** True (after printing why) when the backend is not there and this is not CI. */
    const cannotRun = (): boolean => {
      if (!unavailableBecause) return false;
      console.warn(`${name}: story not run: ${unavailableBecause}`);
      return true;
    };

    const open = async (): Promise<StorageUnderTest> => {
      const storage = await createStorage();
      opened.push(storage);
      return storage;
    };

    const runtimeOn = (
      storage: { keyv: KeyvLike; lock: LockProvider },
      settings: Partial<CodemodeRuntimeOptions> & { name: string },
    ) => {
      const runtime = createCodemodeRuntime({
        limits: LIMITS,
        ...settings,
        storage: { keyv: storage.keyv, lock: storage.lock },
      });
      runtimes.push(runtime);
      return runtime;
    };

    const lockKey = () => `conformance:${randomUUID()}`;

    describe("leases (R-ST-4)", () => {
      it("one holder at a time: of ten racing acquires exactly one wins, and release frees the key", async () => {
        if (cannotRun()) return;
        const { lock } = await open();
        const key = lockKey();
        const leases = await Promise.all(
          Array.from({ length: 10 }, () => lock.acquire(key, { ttlMs: 10_000, waitMs: 0 })),
        );
        const winners = leases.filter((lease): lease is Lease => lease !== null);
        expect(winners).toHaveLength(1);
        expect(await lock.isHeld(key)).toBe(true);
        expect(await lock.acquire(key, { ttlMs: 10_000, waitMs: 0 })).toBeNull();
        await winners[0]!.release();
        expect(await lock.isHeld(key)).toBe(false);
        const next = await lock.acquire(key, { ttlMs: 10_000, waitMs: 0 });
        expect(next).not.toBeNull();
        expect(next!.token).not.toBe(winners[0]!.token);
        await next!.release();
      });

      it("a waiting acquire gets the key soon after the holder releases it, and gives up with null after waitMs", async () => {
        if (cannotRun()) return;
        const { lock } = await open();
        const key = lockKey();
        const holder = await lock.acquire(key, { ttlMs: 10_000, waitMs: 0 });
        expect(holder).not.toBeNull();

        const started = Date.now();
        expect(await lock.acquire(key, { ttlMs: 10_000, waitMs: 200 })).toBeNull();
        expect(Date.now() - started).toBeGreaterThanOrEqual(190);

        const waiting = lock.acquire(key, { ttlMs: 10_000, waitMs: 5_000 });
        await sleep(150);
        await holder!.release();
        const releasedAt = Date.now();
        const next = await waiting;
        expect(next).not.toBeNull();
        expect(Date.now() - releasedAt).toBeLessThan(1_000);
        await next!.release();
      });

      it("a lease lapses after its ttl: the key reads as free and another acquire wins", async () => {
        if (cannotRun()) return;
        const { lock } = await open();
        const key = lockKey();
        const first = await lock.acquire(key, { ttlMs: 300, waitMs: 0 });
        expect(first).not.toBeNull();
        expect(await lock.isHeld(key)).toBe(true);
        await sleep(450);
        expect(await lock.isHeld(key)).toBe(false);
        const second = await lock.acquire(key, { ttlMs: 10_000, waitMs: 0 });
        expect(second).not.toBeNull();
        await second!.release();
      });

      it("renew extends a live lease, and answers false once it lapsed — taken by another or not", async () => {
        if (cannotRun()) return;
        const { lock } = await open();
        const key = lockKey();
        const lease = await lock.acquire(key, { ttlMs: 400, waitMs: 0 });
        expect(lease).not.toBeNull();
        await sleep(250);
        expect(await lease!.renew(400)).toBe(true);
        await sleep(250);
        // 500 ms after it was taken with a 400 ms ttl: alive only because it was renewed.
        expect(await lock.isHeld(key)).toBe(true);
        expect(await lock.acquire(key, { ttlMs: 400, waitMs: 0 })).toBeNull();

        await sleep(400);
        expect(await lease!.renew(10_000)).toBe(false);
        expect(await lock.isHeld(key)).toBe(false);

        const other = await lock.acquire(key, { ttlMs: 10_000, waitMs: 0 });
        expect(other).not.toBeNull();
        expect(await lease!.renew(10_000)).toBe(false);
        expect(await other!.renew(10_000)).toBe(true);
        await other!.release();
      });

      it("release checks the token: a lapsed holder's release leaves the new holder's lease alone", async () => {
        if (cannotRun()) return;
        const { lock } = await open();
        const key = lockKey();
        const stale = await lock.acquire(key, { ttlMs: 200, waitMs: 0 });
        expect(stale).not.toBeNull();
        await sleep(300);
        const current = await lock.acquire(key, { ttlMs: 10_000, waitMs: 0 });
        expect(current).not.toBeNull();
        await stale!.release();
        expect(await lock.isHeld(key)).toBe(true);
        expect(await lock.acquire(key, { ttlMs: 10_000, waitMs: 0 })).toBeNull();
        expect(await current!.renew(10_000)).toBe(true);
        await current!.release();
        expect(await lock.isHeld(key)).toBe(false);
      });

      if (shared) {
        it("two storages opened on the same backend exclude each other, as two processes would", async () => {
          if (cannotRun()) return;
          const first = await open();
          const second = await open();
          const key = lockKey();
          const [a, b] = await Promise.all([
            first.lock.acquire(key, { ttlMs: 10_000, waitMs: 0 }),
            second.lock.acquire(key, { ttlMs: 10_000, waitMs: 0 }),
          ]);
          expect([a, b].filter((lease) => lease !== null)).toHaveLength(1);
          const winner = (a ?? b)!;
          const loserLock = a ? second.lock : first.lock;
          expect(await loserLock.isHeld(key)).toBe(true);
          const waiting = loserLock.acquire(key, { ttlMs: 10_000, waitMs: 5_000 });
          await sleep(100);
          await winner.release();
          const taken = await waiting;
          expect(taken).not.toBeNull();
          expect(await winner.renew(10_000)).toBe(false);
          await taken!.release();
        });
      }
    });

    if (options.fenced) {
      describe("the fenced write (R-ST-6)", () => {
        const acquired = async (
          lock: LockProvider,
          key: string,
          ttlMs: number,
        ): Promise<Lease & { setIfHeld: NonNullable<Lease["setIfHeld"]> }> => {
          const lease = await lock.acquire(key, { ttlMs, waitMs: 0 });
          expect(lease).not.toBeNull();
          expect(typeof lease!.setIfHeld).toBe("function");
          return lease as Lease & { setIfHeld: NonNullable<Lease["setIfHeld"]> };
        };

        it("a held lease writes as the store's Keyv would: every value reads back by get and getMany, as written", async () => {
          if (cannotRun()) return;
          const { keyv, lock } = await open();
          const key = lockKey();
          const lease = await acquired(lock, key, 10_000);
          // Text Keyv's serializer escapes (a leading ":"), JSON, and characters beyond ASCII.
          const values = [":starts with a colon", '{"seq":3,"state":"applied"}', "async () => 'naïve ✓ 😀'", ""];
          const keys = values.map((_, position) => `cm:${key}:${position}`);
          expect(
            await lease.setIfHeld(keys.map((entryKey, position) => ({ key: entryKey, value: values[position]! }))),
          ).toBe(true);
          for (const [position, entryKey] of keys.entries()) expect(await keyv.get(entryKey)).toBe(values[position]);
          expect(await keyv.getMany!(keys)).toEqual(values);
          // And what Keyv itself writes there, the fenced write overwrites.
          await keyv.set(keys[0]!, "written by keyv");
          expect(await lease.setIfHeld([{ key: keys[0]!, value: "fenced again" }])).toBe(true);
          expect(await keyv.get(keys[0]!)).toBe("fenced again");
          await lease.release();
        });

        it("a lapsed lease writes nothing, whether its key was taken since or not; the new holder writes", async () => {
          if (cannotRun()) return;
          const { keyv, lock } = await open();
          const key = lockKey();
          const entryKey = `cm:${key}:head`;
          const stale = await acquired(lock, key, 200);
          expect(await stale.setIfHeld([{ key: entryKey, value: "first" }])).toBe(true);
          await sleep(300);
          expect(
            await stale.setIfHeld([
              { key: entryKey, value: "lapsed, nobody took it" },
              { key: `${entryKey}:more`, value: "x" },
            ]),
          ).toBe(false);
          const current = await acquired(lock, key, 10_000);
          expect(await stale.setIfHeld([{ key: entryKey, value: "lapsed, taken" }])).toBe(false);
          expect(await keyv.get(entryKey)).toBe("first");
          expect(await keyv.get(`${entryKey}:more`)).toBeUndefined();
          expect(await current.setIfHeld([{ key: entryKey, value: "second" }])).toBe(true);
          expect(await keyv.get(entryKey)).toBe("second");
          await current.release();
          expect(await current.setIfHeld([{ key: entryKey, value: "after release" }])).toBe(false);
          expect(await keyv.get(entryKey)).toBe("second");
        });

        it("a put of the listing fenced by a lapsed lease lists nothing; by a live one it lists", async () => {
          if (cannotRun()) return;
          const storage = await open();
          if (!storage.index)
            throw new Error("a fenced store must hand its native listing to the suite (StorageUnderTest.index)");
          const index = storage.index.forRuntime(runtimeName());
          const key = lockKey();
          const stale = await acquired(storage.lock, key, 200);
          const row = { id: randomUUID(), status: "running" as const, createdAt: Date.now(), updatedAt: Date.now() };
          await index.put(row, undefined, { key, token: stale.token });
          expect(await index.list({ statuses: ["running"], limit: 10 })).toEqual([row]);
          await sleep(300);
          await index.put({ ...row, status: "completed", updatedAt: row.updatedAt + 1 }, "running", {
            key,
            token: stale.token,
          });
          expect(await index.list({ limit: 10 })).toEqual([row]);
          const current = await acquired(storage.lock, key, 10_000);
          await index.put({ ...row, status: "error", updatedAt: row.updatedAt + 2 }, "running", {
            key,
            token: stale.token,
          });
          await index.put({ ...row, status: "paused", updatedAt: row.updatedAt + 3 }, "running", {
            key,
            token: current.token,
          });
          expect(await index.list({ limit: 10 })).toEqual([{ ...row, status: "paused", updatedAt: row.updatedAt + 3 }]);
          await current.release();
        });

        if (options.dropLease) {
          const dropLease = options.dropLease;
          it("R-ST-4 R-ST-6 a pass whose lease the store lost while the pass still counted it valid writes nothing more: the new holder's record stands", async () => {
            if (cannotRun()) return;
            const storage = await open();
            const name = runtimeName();
            const other = runtimeOn(storage, { name });
            const reads: number[] = [];
            let executionId = "";
            const tools = defineConnector({
              name: "tools",
              tools: {
                // While this call runs, the store loses the lease (a failover) and another host
                // takes the run and ends it. The pass's own clock says its lease is fresh.
                lose: {
                  execute: async (_args: unknown, context) => {
                    executionId = context.executionId;
                    await dropLease(storage, `cm:${name}:lock:${context.executionId}`);
                    const ended = await other.expirePaused({ maxAgeMs: 60_000 });
                    expect(ended).toEqual([context.executionId]);
                    return "done";
                  },
                },
                read: {
                  execute: async (args: { i: number }) => {
                    reads.push(args.i);
                    return args.i;
                  },
                },
              },
            });
            const worker = runtimeOn(storage, { name, connectors: [tools], leaseMs: 60_000 });
            const outcome = await worker.execute({
              code: `async () => { await tools.lose({}); return await tools.read({ i: 1 }); }`,
            });
            expectStatus(outcome, "error");
            expect(outcome.code).toBe("BUSY");
            const state = await other.execution(executionId);
            expect(state?.status).toBe("error");
            expect(state?.error).toMatch(/lease lapsed/);
            expect(state?.log.map((entry) => [entry.method, entry.state])).toEqual([["lose", "executing"]]);
            expect(reads).toEqual([]);
          });
        }
      });
    }

    describe("the durable log on this store", () => {
      it("R-ST-1 bytes written per call stay flat from a 10-call log to a 1,000-call log", async () => {
        if (cannotRun()) return;
        const storage = await open();
        const perCall = async (calls: number) => {
          const { keyv, counts } = countingKeyv(storage.keyv);
          const ledger = ledgerConnector();
          const runtime = runtimeOn(
            { keyv, lock: countingLock(storage.lock, counts) },
            { name: runtimeName(), connectors: [ledger.connector] },
          );
          const outcome = await runtime.execute({ code: readsProgram(calls) });
          expectStatus(outcome, "completed");
          expect(outcome.result).toBe(calls);
          // Every call leaves its entry: a count that missed the writes would pass for flat.
          expect(counts.keysWritten).toBeGreaterThanOrEqual(calls);
          return counts.charactersWritten / calls;
        };
        const at10 = await perCall(10);
        const at1000 = await perCall(1_000);
        console.log(
          `${name}: R-ST-1 characters written per call ${at10.toFixed(1)} at 10 calls, ${at1000.toFixed(1)} at 1,000 (ratio ${(at1000 / at10).toFixed(3)})`,
        );
        expect(at1000 / at10).toBeLessThanOrEqual(1.1);
      });

      it("R-ST-2 approve loads the whole log with one batched read, and replayed calls read nothing", async () => {
        if (cannotRun()) return;
        const storage = await open();
        const { keyv, counts, reset } = countingKeyv(storage.keyv);
        const ledger = ledgerConnector();
        const runtime = runtimeOn(
          { keyv, lock: storage.lock },
          { name: runtimeName(), connectors: [ledger.connector] },
        );
        const paused = await runtime.execute({ code: readsThenApplyProgram(40) });
        expectStatus(paused, "paused");
        expect(paused.pending[0]).toMatchObject({ seq: 40, connector: "ledger", method: "apply" });

        reset();
        const done = await runtime.approve({ executionId: paused.executionId });
        expectStatus(done, "completed");
        expect(done.result).toEqual({ total: 40, applied: "item-0" });
        expect(ledger.applied).toEqual([`${paused.executionId}:40`]);
        const entryKey = `:e:${paused.executionId}:`;
        const logLoads = counts.getManys.filter((keys) => keys.some((key) => key.includes(entryKey)));
        expect(logLoads).toHaveLength(1);
        for (let seq = 0; seq <= 40; seq++)
          expect(logLoads[0]).toContainEqual(expect.stringMatching(new RegExp(`${entryKey}${seq}$`)));
        expect(counts.gets.filter((key) => key.includes(entryKey))).toEqual([]);
      });

      it("the runtime's name keeps histories apart: two runtimes on one storage do not see each other's runs", async () => {
        if (cannotRun()) return;
        const storage = await open();
        const ledger = ledgerConnector();
        const shop = runtimeOn(storage, { name: runtimeName(), connectors: [ledger.connector] });
        const warehouse = runtimeOn(storage, { name: runtimeName(), connectors: [ledger.connector] });
        const shopPaused = await shop.execute({ code: readsThenApplyProgram(1) });
        expectStatus(shopPaused, "paused");
        const warehouseDone = await warehouse.execute({ code: readsProgram(2) });
        expectStatus(warehouseDone, "completed");

        expect((await shop.executions()).items.map((state) => state.id)).toEqual([shopPaused.executionId]);
        expect((await warehouse.executions()).items.map((state) => state.id)).toEqual([warehouseDone.executionId]);
        expect(await warehouse.execution(shopPaused.executionId)).toBeNull();
        expect((await warehouse.pending()).items).toEqual([]);
        const crossApprove = await warehouse.approve({ executionId: shopPaused.executionId });
        expectStatus(crossApprove, "error");
        expect(crossApprove.code).toBe("NOT_FOUND");
        expect(await warehouse.reject({ executionId: shopPaused.executionId, seq: 1 })).toBe(false);
        expectStatus(await shop.approve({ executionId: shopPaused.executionId }), "completed");
        expect(ledger.applied).toEqual([`${shopPaused.executionId}:1`]);
      });

      it("R-ST-3 a run paused on one runtime instance is approved on another and completes; the action runs once", async () => {
        if (cannotRun()) return;
        const storage = await open();
        const name = runtimeName();
        const firstLedger = ledgerConnector();
        const first = runtimeOn(storage, { name, connectors: [firstLedger.connector] });
        const paused = await first.execute({ code: readsThenApplyProgram(3) });
        expectStatus(paused, "paused");
        await first.close();

        const secondLedger = ledgerConnector();
        const second = runtimeOn(storage, { name, connectors: [secondLedger.connector] });
        expect((await second.pending()).items).toEqual([
          { executionId: paused.executionId, seq: 3, connector: "ledger", method: "apply", args: { item: "item-0" } },
        ]);
        const done = await second.approve({ executionId: paused.executionId, seq: 3, by: "ops" });
        expectStatus(done, "completed");
        expect(done.result).toEqual({ total: 3, applied: "item-0" });
        expect(firstLedger.reads).toBe(3);
        expect(firstLedger.applied).toEqual([]);
        expect(secondLedger.reads).toBe(0);
        expect(secondLedger.applied).toEqual([`${paused.executionId}:3`]);
        const state = await second.execution(paused.executionId);
        expect(state?.status).toBe("completed");
        expect(state?.log.at(-1)).toMatchObject({ seq: 3, state: "applied", decision: { approved: true, by: "ops" } });
      });

      if (shared) {
        it("R-ST-3 a storage opened anew on the same backend (a restart) resumes the paused run", async () => {
          if (cannotRun()) return;
          const name = runtimeName();
          const before = await open();
          const ledger = ledgerConnector();
          const paused = await runtimeOn(before, { name, connectors: [ledger.connector] }).execute({
            code: readsThenApplyProgram(2),
          });
          expectStatus(paused, "paused");
          await before.close();

          const after = await open();
          const done = await runtimeOn(after, { name, connectors: [ledger.connector] }).approve({
            executionId: paused.executionId,
          });
          expectStatus(done, "completed");
          expect(ledger.applied).toEqual([`${paused.executionId}:2`]);
        });
      }

      it("R-AP-6 two runtime instances approve the same run at once: the action runs once, the other gets NOT_PAUSED or BUSY", async () => {
        if (cannotRun()) return;
        const storage = await open();
        const name = runtimeName();
        const ledger = ledgerConnector();
        const first = runtimeOn(storage, { name, connectors: [ledger.connector] });
        const second = runtimeOn(storage, { name, connectors: [ledger.connector] });
        for (let round = 0; round < 5; round++) {
          const paused = await first.execute({ code: readsThenApplyProgram(2) });
          expectStatus(paused, "paused");
          const outcomes = await Promise.all([
            first.approve({ executionId: paused.executionId }),
            second.approve({ executionId: paused.executionId }),
          ]);
          expect(outcomes.filter((outcome) => outcome.status === "completed")).toHaveLength(1);
          const loser = outcomes.find((outcome) => outcome.status !== "completed")!;
          expectStatus(loser, "error");
          expect(["NOT_PAUSED", "BUSY"]).toContain(loser.code);
          expect(ledger.applied.filter((applied) => applied.startsWith(paused.executionId))).toHaveLength(1);
        }
      });

      it("R-ST-4 R-ST-6 a pass whose lease lapsed does not overwrite the record of the host that expired it, nor write the result of the call it ran across the lapse", async () => {
        if (cannotRun()) return;
        const storage = await open();
        const name = runtimeName();
        // The host running the pass "freezes": its renewals stop reaching the store, its lease lapses,
        // and another runtime expires the run. When it wakes, it must notice and write nothing over it.
        const frozen = { now: false };
        const pausedLock = freezableLock(storage.lock, frozen);
        const janitor = runtimeOn(storage, { name });
        let expired: string[] = [];
        const sleeper = defineConnector({
          name: "sleeper",
          tools: {
            nap: {
              execute: async (_args: unknown, context) => {
                frozen.now = true;
                const deadline = Date.now() + 10_000;
                while (expired.length === 0 && Date.now() < deadline) {
                  await sleep(50);
                  expired = await janitor.expirePaused({ maxAgeMs: 60_000 });
                }
                frozen.now = false;
                expect(expired).toEqual([context.executionId]);
                return "awake";
              },
            },
            read: { execute: async (args: { i: number }) => ({ i: args.i }) },
          },
        });
        const worker = runtimeOn(
          { keyv: storage.keyv, lock: pausedLock },
          { name, connectors: [sleeper], leaseMs: 300 },
        );
        // 40 reads after the nap cross a block of 32 seqs, so the pass wants to rewrite the head.
        const outcome = await worker.execute({
          code: `async () => { await sleeper.nap({}); let total = 0; for (let i = 0; i < 40; i++) total += (await sleeper.read({ i })).i; return total; }`,
        });
        expectStatus(outcome, "error");
        expect(outcome.code).toBe("BUSY");
        expect(outcome.error).toMatch(/taken over/);
        const state = await janitor.execution(outcome.executionId);
        expect(state?.status).toBe("error");
        expect(state?.error).toMatch(/lease lapsed/);
        // The nap ran across the lapse: its write-ahead is in the log, its result is not (R-ST-6).
        expect(state?.log.map((entry) => [entry.method, entry.state])).toEqual([["nap", "executing"]]);
      });

      it("R-ST-5 a store that fails mid-pass and between calls gives STORAGE_ERROR — never NOT_FOUND — and no unhandled rejection", async () => {
        if (cannotRun()) return;
        const storage = await open();
        const name = runtimeName();
        const ledger = ledgerConnector();
        let breakNow = false;
        const breaker = defineConnector({
          name: "breaker",
          tools: {
            pull: {
              execute: async () => {
                if (breakNow) await breakStorage(storage);
                return "pulled";
              },
            },
          },
        });
        const runtime = runtimeOn(storage, { name, connectors: [ledger.connector, breaker], leaseMs: 500 });
        const paused = await runtime.execute({ code: readsThenApplyProgram(2) });
        expectStatus(paused, "paused");

        let brokenRunId = "";
        const rejections: unknown[] = [];
        const onRejection = (reason: unknown) => rejections.push(reason);
        process.on("unhandledRejection", onRejection);
        try {
          breakNow = true;
          const midPass = await runtime.execute({
            code: `async () => { const first = await breaker.pull({}); for (let i = 0; i < 5; i++) await ledger.read({ i }); return first; }`,
          });
          expectStatus(midPass, "error");
          expect(midPass.code).toBe("STORAGE_ERROR");
          brokenRunId = midPass.executionId;

          const approved = await runtime.approve({ executionId: paused.executionId });
          expectStatus(approved, "error");
          expect(approved.code).toBe("STORAGE_ERROR");
          const unknown = await runtime.approve({ executionId: randomUUID() });
          expectStatus(unknown, "error");
          expect(unknown.code).toBe("STORAGE_ERROR");
          const fresh = await runtime.execute({ code: readsProgram(1) });
          expectStatus(fresh, "error");
          expect(fresh.code).toBe("STORAGE_ERROR");
          // R-RT-3: "false" would say the action was not pending; the store could not say.
          await expect(runtime.reject({ executionId: paused.executionId, seq: 2 })).rejects.toMatchObject({
            name: "CodemodeError",
            code: "STORAGE_ERROR",
          });
          await expect(runtime.pending()).rejects.toMatchObject({ code: "STORAGE_ERROR" });
          await expect(runtime.execution(paused.executionId)).rejects.toMatchObject({ code: "STORAGE_ERROR" });
          const rollback = await runtime.rollback({ executionId: paused.executionId });
          expect(rollback).toMatchObject({ code: "STORAGE_ERROR" });
          for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve));
        } finally {
          process.off("unhandledRejection", onRejection);
        }
        expect(rejections).toEqual([]);
        expect(ledger.applied).toEqual([]);

        if (shared) {
          // The record stayed consistent: a new storage sees the paused run still paused, and the
          // broken pass as running with a lease that lapses, so expiry can end it.
          const reopened = await open();
          const other = runtimeOn(reopened, { name, connectors: [ledger.connector] });
          expect((await other.execution(paused.executionId))?.status).toBe("paused");
          const broken = await other.execution(brokenRunId);
          expect(broken?.log[0]).toMatchObject({ seq: 0, connector: "breaker", method: "pull" });
          if (broken?.status === "running") {
            await sleep(600);
            expect(await other.expirePaused({ maxAgeMs: 60_000 })).toEqual([brokenRunId]);
          }
          expect((await other.execution(brokenRunId))?.status).toBe("error");
          expectStatus(await other.approve({ executionId: paused.executionId }), "completed");
          expect(ledger.applied).toEqual([`${paused.executionId}:2`]);
        }
      });
    });
  });
}

/** A connector whose reads are free and whose `apply` needs approval; it remembers what it did. */
function ledgerConnector() {
  const applied: string[] = [];
  let reads = 0;
  const connector = defineConnector({
    name: "ledger",
    tools: {
      read: {
        execute: async (args: { i: number }) => {
          reads += 1;
          return { i: args.i, count: 1 };
        },
      },
      apply: {
        requiresApproval: true,
        execute: async (args: { item: string }, context) => {
          applied.push(context.idempotencyKey);
          return { applied: args.item };
        },
      },
    },
  });
  return {
    connector,
    /** `idempotencyKey`s of the applied actions, in order. */
    applied,
    get reads() {
      return reads;
    },
  };
}

const readsProgram = (calls: number) => `async () => {
  let total = 0;
  for (let i = 0; i < ${calls}; i++) total += (await ledger.read({ i })).count;
  return total;
}`;

const readsThenApplyProgram = (reads: number) => `async () => {
  let total = 0;
  for (let i = 0; i < ${reads}; i++) total += (await ledger.read({ i })).count;
  const done = await ledger.apply({ item: "item-0" });
  return { total, applied: done.applied };
}`;

/** A lock whose leases stop renewing while `frozen.now` is set, as if their host had stalled. */
function freezableLock(lock: LockProvider, frozen: { now: boolean }): LockProvider {
  return {
    isHeld: (key) => lock.isHeld(key),
    async acquire(key, options) {
      const lease = await lock.acquire(key, options);
      if (!lease) return null;
      return {
        token: lease.token,
        // A frozen host's renewals never reach the store: they fail, as a request that cannot be sent does.
        renew: async (ttlMs) => {
          if (frozen.now) throw new Error("the host is frozen: the renewal never reached the store");
          return lease.renew(ttlMs);
        },
        release: () => lease.release(),
        ...(lease.setIfHeld
          ? {
              setIfHeld: async (entries: ReadonlyArray<{ key: string; value: string }>) => {
                if (frozen.now) throw new Error("the host is frozen: the write never reached the store");
                return lease.setIfHeld!(entries);
              },
            }
          : {}),
      };
    },
  };
}

function runtimeName(): string {
  return `conformance-${randomUUID().slice(0, 8)}`;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function expectStatus<S extends Outcome["status"]>(
  outcome: Outcome,
  status: S,
): asserts outcome is Extract<Outcome, { status: S }> {
  if (outcome.status !== status) throw new Error(`expected ${status}, got ${JSON.stringify(outcome).slice(0, 600)}`);
}
