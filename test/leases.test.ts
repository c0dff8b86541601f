/**
 * Leases (R-ST-4, R-AP-6, R-RB-4): a pass or control operation owns an execution while its lease
 * lives; a pass that lost it causes no further effect, and long operations keep theirs renewed.
 */

import { createCodemodeRuntime, defineConnector } from "@codemode/core";
import { createInProcessLock, type Lease, type LockProvider } from "@codemode/core/store";
import Keyv from "keyv";
import { describe, expect, it, vi } from "vitest";

/** An in-process lock whose leases a test can take away, as a store would after a long stall. */
function stealableLock(): { lock: LockProvider; steal(key: string): Promise<void> } {
  const inner = createInProcessLock();
  const live = new Map<string, { lease: Lease; stolen: boolean }>();
  return {
    lock: {
      async acquire(key, options) {
        const lease = await inner.acquire(key, options);
        if (!lease) return null;
        const state = { lease, stolen: false };
        live.set(key, state);
        return {
          token: lease.token,
          renew: async (ttlMs) => (state.stolen ? false : lease.renew(ttlMs)),
          release: async () => {
            if (!state.stolen) await lease.release();
          },
        };
      },
      isHeld: (key) => inner.isHeld(key),
    },
    async steal(key) {
      const state = live.get(key);
      if (!state) throw new Error(`no lease on ${key}`);
      state.stolen = true;
      await state.lease.release();
    },
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("leases", () => {
  it("R-ST-4: a pass whose lease was lost, and whose run another host expired, runs nothing more", async () => {
    const events: string[] = [];
    let releaseWait!: () => void;
    let waiting!: () => void;
    const started = new Promise<void>((resolve) => (waiting = resolve));
    const tools = defineConnector({
      name: "t",
      tools: {
        wait: {
          execute: () => {
            waiting();
            return new Promise((resolve) => (releaseWait = () => resolve(1)));
          },
        },
        effect: { execute: () => void events.push("effect") },
      },
      disposeExecution: (_id, status) => void events.push(`dispose:${status}`),
    });
    const { lock, steal } = stealableLock();
    const storage = { keyv: new Keyv(), lock };
    const runtime = createCodemodeRuntime({ connectors: [tools], storage, leaseMs: 300, logger: { warn() {} } });
    const pass = runtime.execute({ code: "async () => { await t.wait({}); await t.effect({}); return 'done'; }" });
    await started;
    const [running] = (await runtime.executions({ limit: 1 })).items;
    // The host stalled past its lease: the store gave the lease up; another host expires the run.
    await steal(`cm:default:lock:${running!.id}`);
    expect(await runtime.expirePaused()).toEqual([running!.id]);
    await sleep(250); // the pass's renewal learns the lease is gone
    releaseWait();
    const outcome = await pass;
    expect(outcome).toMatchObject({ status: "error", code: "BUSY" });
    expect(events).toEqual(["dispose:error"]);
    const record = await runtime.execution(running!.id);
    expect(record?.status).toBe("error");
    expect(record?.log.map((entry) => entry.method)).toEqual(["wait"]);
    await runtime.close();
  });

  it("R-ST-6: a pass whose process stalled past its lease asks the store before its next call, even when no renewal ran meanwhile: the call does not run and its result is not written", async () => {
    // Only the clock jumps (the stall); timers stay real, and the lease's renewal (every 20 s) never runs.
    vi.useFakeTimers({ toFake: ["Date"] });
    try {
      const lock = createInProcessLock();
      const calls: string[] = [];
      let otherHost: Lease | null = null;
      const tools = defineConnector({
        name: "t",
        tools: {
          stall: {
            execute: async (_args: unknown, context) => {
              calls.push("stall");
              // The process froze for 70 s inside this tool: the 60 s lease lapsed and another host took the run.
              vi.setSystemTime(Date.now() + 70_000);
              otherHost = await lock.acquire(`cm:default:lock:${context.executionId}`, { ttlMs: 60_000, waitMs: 0 });
              return "woke";
            },
          },
          effect: { execute: () => void calls.push("effect") },
        },
      });
      const runtime = createCodemodeRuntime({
        connectors: [tools],
        storage: { keyv: new Keyv(), lock },
        leaseMs: 60_000,
        limits: { timeoutMs: 600_000 },
        logger: { warn() {} },
      });
      const outcome = await runtime.execute({
        code: "async () => { await t.stall({}); await t.effect({}); return 'done'; }",
      });
      expect(otherHost).not.toBeNull();
      expect(outcome).toMatchObject({ status: "error", code: "BUSY" });
      expect(calls).toEqual(["stall"]);
      // The result of the tool that ran across the lapse is not written: the next owner decides about it.
      const record = await runtime.execution(outcome.executionId);
      expect(record?.status).toBe("running");
      expect(record?.log.map((entry) => [entry.method, entry.state])).toEqual([["stall", "executing"]]);
      await runtime.close();
    } finally {
      vi.useRealTimers();
    }
  });

  it("R-RB-4: a rollback whose reverts outlast the lease keeps it renewed, so a second rollback cannot revert twice", async () => {
    let reverts = 0;
    const shop = defineConnector({
      name: "shop",
      tools: {
        charge: {
          execute: () => ({ id: "ch-1" }),
          revert: async () => {
            reverts++;
            await sleep(150);
          },
        },
      },
    });
    const runtime = createCodemodeRuntime({ connectors: [shop], leaseMs: 50, lockWaitMs: 1_000 });
    const done = await runtime.execute({ code: "async () => (await shop.charge({ amount: 5 })).id" });
    const reports = await Promise.all([
      runtime.rollback({ executionId: done.executionId }),
      runtime.rollback({ executionId: done.executionId }),
    ]);
    expect(reverts).toBe(1);
    expect(reports.map((report) => report.reverted)).toEqual(expect.arrayContaining([[0], []]));
    await runtime.close();
  });
});
