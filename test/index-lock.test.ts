import Keyv from "keyv";
import { describe, expect, it } from "vitest";
import { createCodemodeRuntime, createInProcessLock, defineConnector, type Lease } from "@codemode/core";

/**
 * The execution index serves listings only; the head is the truth. A busy index lock at the end
 * of a pass (another execution or process updating it) must not turn a status change that
 * happened into an error (R-RT-1), hide a paused run from pending() (R-AP-1), or make reject
 * answer "nothing changed" (R-AP-4).
 */
function setup() {
  const keyv = new Keyv();
  const lock = createInProcessLock();
  let indexLease: Lease | null = null;
  const effects: string[] = [];
  const shop = defineConnector({
    name: "shop",
    tools: {
      // Stands in for another execution / process holding the index lock right now.
      charge: { execute: async () => { effects.push("charge"); indexLease = await lock.acquire("cm:default:lock:index", { ttlMs: 10_000, waitMs: 0 }); return { id: "ch-1" }; } },
      refund: { requiresApproval: true, execute: async () => { effects.push("refund"); return 1; } },
    },
  });
  const runtime = createCodemodeRuntime({ connectors: [shop], storage: { keyv, lock }, lockWaitMs: 50 });
  return { runtime, effects, release: () => indexLease?.release() };
}

describe("a busy execution index", () => {
  it("R-RT-1: a run that completed is reported completed, not BUSY, so the model does not retry the charge", async () => {
    const { runtime, effects, release } = setup();
    const outcome = await runtime.execute({ code: "async () => (await shop.charge({ amount: 5 })).id" });
    await release();
    const record = await runtime.execution(outcome.executionId);
    await runtime.close();
    expect(record?.status).toBe("completed");
    expect(outcome.status).toBe("completed");
  });

  it("R-AP-1: a run that paused is reported paused and listed by pending()", async () => {
    const { runtime, release } = setup();
    const outcome = await runtime.execute({ code: "async () => { await shop.charge({}); await shop.refund({}); }" });
    await release();
    const record = await runtime.execution(outcome.executionId);
    const pendingAll = await runtime.pending();
    const pendingOne = await runtime.pending(outcome.executionId);
    await runtime.close();
    expect(outcome.status).toBe("paused");
    expect(pendingAll).toEqual(pendingOne);
  });
});

describe("a busy execution index, control operations", () => {
  it("R-AP-4 R-RS-2: reject answers true when it rejected the run, and disposeExecution runs", async () => {
    const keyv = new Keyv();
    const lock = createInProcessLock();
    const disposed: string[] = [];
    const shop = defineConnector({
      name: "shop",
      tools: { refund: { requiresApproval: true, execute: () => 1 } },
      disposeExecution: (id, status) => { disposed.push(status); },
    });
    const runtime = createCodemodeRuntime({ connectors: [shop], storage: { keyv, lock }, lockWaitMs: 50 });
    const paused = await runtime.execute({ code: "async () => shop.refund({})" });
    const indexLease = await lock.acquire("cm:default:lock:index", { ttlMs: 10_000, waitMs: 0 });
    const answered = await runtime.reject({ executionId: paused.executionId, seq: 0 });
    await indexLease?.release();
    const record = await runtime.execution(paused.executionId);
    await runtime.close();
    expect(record?.status === "rejected").toBe(answered); // false ⇒ "changed nothing" (R-AP-4)
    expect(disposed).toEqual(["rejected"]); // R-RS-2
  });

  it("R-RE-2: execute that cannot list a new run leaves no unlisted 'running' record behind", async () => {
    const keyv = new Keyv();
    const lock = createInProcessLock();
    const runtime = createCodemodeRuntime({ storage: { keyv, lock }, lockWaitMs: 50 });
    const indexLease = await lock.acquire("cm:default:lock:index", { ttlMs: 10_000, waitMs: 0 });
    const outcome = await runtime.execute({ code: "1 + 1" });
    await indexLease?.release();
    const expired = await runtime.expirePaused({ maxAgeMs: 0 });
    const record = await runtime.execution(outcome.executionId);
    await runtime.close();
    expect(record === null || record.status !== "running").toBe(true);
  });
});
