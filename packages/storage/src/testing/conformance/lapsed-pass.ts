import { defineConnector } from "@codemode/core";
import type { LockProvider } from "@codemode/core/store";
import { expect, it } from "vitest";
import { expectStatus, sleep } from "../story-helpers.js";
import type { StorageUnderTest } from "./interface.js";
import { runtimeName, type StorageSuite } from "./storage-suite.js";

/**
 * R-ST-4 R-ST-6: the store lost a pass's lease (a failover) while the pass's own clock still
 * counts it valid; the pass writes nothing more, and the new holder's record stands.
 */
export function lostLeaseStory(
  suite: StorageSuite,
  dropLease: (storage: StorageUnderTest, key: string) => Promise<void>,
): void {
  it("R-ST-4 R-ST-6 a pass whose lease the store lost while the pass still counted it valid writes nothing more: the new holder's record stands", async () => {
    if (suite.cannotRun()) return;
    const storage = await suite.open();
    const name = runtimeName();
    const other = suite.runtimeOn(storage, { name });
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
    const worker = suite.runtimeOn(storage, { name, connectors: [tools], leaseMs: 60_000 });
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

/**
 * R-ST-4 R-ST-6: a host that froze while its pass ran lets its lease lapse, and another runtime
 * expires the run; when the host wakes, it writes nothing over that record.
 */
export function frozenHostStory(suite: StorageSuite): void {
  it("R-ST-4 R-ST-6 a pass whose lease lapsed does not overwrite the record of the host that expired it, nor write the result of the call it ran across the lapse", async () => {
    if (suite.cannotRun()) return;
    const storage = await suite.open();
    const name = runtimeName();
    // The host running the pass "freezes": its renewals stop reaching the store, its lease lapses,
    // and another runtime expires the run. When it wakes, it must notice and write nothing over it.
    const frozen = { now: false };
    const pausedLock = freezableLock(storage.lock, frozen);
    const janitor = suite.runtimeOn(storage, { name });
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
    const worker = suite.runtimeOn(
      { keyv: storage.keyv, lock: pausedLock },
      // Long enough that a loaded machine's stall cannot lapse it before the nap; the nap waits for it.
      { name, connectors: [sleeper], leaseMs: 1_000 },
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
}

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
