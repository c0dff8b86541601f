import { describe, expect, it, vi } from "vitest";
import { ExecutionLease, type LeaseSettings, withLease } from "./lease.js";
import { createInProcessLock, type LockProvider } from "./lock.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function settings(lock: LockProvider, status: () => string | undefined = () => "running", leaseMs = 60): LeaseSettings {
  return { lock, leaseMs, keyOf: (id) => `lock:${id}`, readStatus: async () => status() as never };
}

/** A lock whose leases can lapse on demand, as a store that gave the key up would. */
function stealableLock() {
  const inner = createInProcessLock();
  const stolen = new Set<string>();
  const leases = new Map<string, () => Promise<void>>();
  const lock: LockProvider = {
    isHeld: (key) => inner.isHeld(key),
    async acquire(key, options) {
      const lease = await inner.acquire(key, options);
      if (!lease) return null;
      leases.set(lease.token, () => lease.release());
      return {
        token: lease.token,
        renew: async (ttl) => !stolen.has(lease.token) && lease.renew(ttl),
        release: () => lease.release(),
      };
    },
  };
  /** The lease lapses: its renew answers false from now on and the key is free. */
  const steal = async (token: string) => {
    stolen.add(token);
    await leases.get(token)?.();
  };
  return { lock, inner, steal };
}

describe("ExecutionLease (R-ST-4): holding", () => {
  it("excludes a second holder until released; release is idempotent", async () => {
    const lock = createInProcessLock();
    const first = await ExecutionLease.acquire(settings(lock), "e1", 0);
    expect(first).not.toBeNull();
    expect(await ExecutionLease.acquire(settings(lock), "e1", 0)).toBeNull();
    await first!.release();
    await first!.release();
    const second = await ExecutionLease.acquire(settings(lock), "e1", 0);
    expect(second).not.toBeNull();
    await second!.release();
  });

  it("keeps renewing in the background, so a holder outlives its lease length", async () => {
    const lock = createInProcessLock();
    // Renewed every third of its length: 300 ms leaves a loaded machine (a full test run) room to
    // be late; 40 ms lapsed there.
    const lease = await ExecutionLease.acquire(settings(lock, undefined, 300), "e2", 0);
    await sleep(1_000);
    expect(await lock.isHeld("lock:e2")).toBe(true);
    expect(lease!.lost).toBeUndefined();
    await lease!.release();
    expect(await lock.isHeld("lock:e2")).toBe(false);
  });
});

describe("ExecutionLease (R-ST-4): a renew that answers false", () => {
  it("R-ST-6: a renew that answers false loses the lease for good, even when nobody took the key: another may have acted on the lapse", async () => {
    const { lock, steal } = stealableLock();
    const lease = await ExecutionLease.acquire(
      settings(lock, () => "running", 10_000),
      "e3",
      0,
    );
    await steal(lease!.token);
    expect(await lock.isHeld("lock:e3")).toBe(false);
    expect(await lease!.hold()).toBe(false);
    expect(lease!.lost).toBe("held elsewhere");
    // Nothing was taken back: the key stays free for whoever recovers the run.
    expect(await lock.isHeld("lock:e3")).toBe(false);
    await lease!.release();
  });

  it("a renew answering false while another holds the key loses the lease for good, says what became of the run, and confirm says BUSY", async () => {
    const { lock, inner, steal } = stealableLock();
    // The lease lapsed and someone else took the key meanwhile (an expiry running).
    const taken = await ExecutionLease.acquire(
      settings(lock, () => "running", 10_000),
      "e4",
      0,
    );
    await steal(taken!.token);
    const other = await inner.acquire("lock:e4", { ttlMs: 10_000, waitMs: 0 });
    expect(await taken!.hold()).toBe(false);
    expect(taken!.lost).toBe("held elsewhere");
    await other!.release();

    // The lease lapsed and the run was ended meanwhile: the message says so.
    const held = await ExecutionLease.acquire(
      settings(lock, () => "error", 10_000),
      "e5",
      0,
    );
    await steal(held!.token);
    expect(await held!.hold()).toBe(false);
    expect(held!.lost).toBe("error");
    await expect(held!.confirm()).rejects.toMatchObject({ name: "CodemodeError", code: "BUSY" });
    await expect(held!.ensure()).rejects.toMatchObject({ name: "CodemodeError", code: "BUSY" });
    // Lost is lost: a later hold does not revive it.
    expect(await held!.hold()).toBe(false);
    await held!.release();
  });
});

describe("ExecutionLease (R-ST-4): the validity time", () => {
  it("R-ST-6: the validity time: fresh while the store confirmed the lease within its length less a margin; a stalled holder asks the store before it may act", async () => {
    const { lock, steal } = stealableLock();
    let renewals = 0;
    const counting: LockProvider = {
      isHeld: (key) => lock.isHeld(key),
      async acquire(key, options) {
        const lease = await lock.acquire(key, options);
        return (
          lease && {
            token: lease.token,
            renew: (ttl) => {
              renewals++;
              return lease.renew(ttl);
            },
            release: () => lease.release(),
          }
        );
      },
    };
    const lease = await ExecutionLease.acquire(
      settings(counting, () => "running", 10_000),
      "e6",
      0,
    );
    expect(lease!.fresh).toBe(true);
    // While fresh, check answers without a round trip to the store.
    expect(await lease!.check()).toBe(true);
    expect(renewals).toBe(0);

    // The process stalls past 80% of the lease: both clocks jump ahead (the renewal timer did not run).
    const wall = Date.now();
    const monotonic = performance.now();
    vi.spyOn(Date, "now").mockReturnValue(wall + 8_500);
    vi.spyOn(performance, "now").mockReturnValue(monotonic + 8_500);
    expect(lease!.fresh).toBe(false);
    // Still held in the store: check renews, and the lease is fresh again from that renew on.
    expect(await lease!.check()).toBe(true);
    expect(renewals).toBe(1);
    expect(lease!.fresh).toBe(true);

    // Stalled again, and meanwhile the store let the lease go: check learns it is lost.
    vi.spyOn(Date, "now").mockReturnValue(wall + 17_000);
    vi.spyOn(performance, "now").mockReturnValue(monotonic + 17_000);
    await steal(lease!.token);
    expect(await lease!.check()).toBe(false);
    expect(lease!.lost).toBe("held elsewhere");
    expect(lease!.fresh).toBe(false);
    vi.restoreAllMocks();
    await lease!.release();
  });

  it("R-ST-6: the validity time runs on the slower of the two clocks: a wall clock set back does not make a stale lease fresh", async () => {
    const lease = await ExecutionLease.acquire(
      settings(createInProcessLock(), () => "running", 10_000),
      "e7",
      0,
    );
    const monotonic = performance.now();
    vi.spyOn(Date, "now").mockReturnValue(Date.now() - 60_000);
    vi.spyOn(performance, "now").mockReturnValue(monotonic + 9_000);
    expect(lease!.fresh).toBe(false);
    vi.restoreAllMocks();
    await lease!.release();
  });
});

describe("ExecutionLease (R-ST-4): a failing lock store", () => {
  it("a lock store that fails rejects with STORAGE_ERROR, never null (busy) or a silent hold", async () => {
    const broken: LockProvider = {
      acquire: async () => {
        throw new Error("connection refused");
      },
      isHeld: async () => false,
    };
    await expect(ExecutionLease.acquire(settings(broken), "e6", 0)).rejects.toMatchObject({ code: "STORAGE_ERROR" });

    const lock = createInProcessLock();
    const lease = await ExecutionLease.acquire(
      { ...settings(lock), lock: { ...lock, acquire: lock.acquire } },
      "e7",
      0,
    );
    const failingRenew: LeaseSettings = settings({
      isHeld: lock.isHeld,
      acquire: async (key, options) => {
        const inner = await lock.acquire(key, options);
        return (
          inner && {
            token: inner.token,
            renew: async () => Promise.reject(new Error("timeout")),
            release: inner.release,
          }
        );
      },
    });
    await lease!.release();
    const failing = await ExecutionLease.acquire(failingRenew, "e8", 0);
    await expect(failing!.hold()).rejects.toMatchObject({ code: "STORAGE_ERROR" });
    // An outage is not a lost lease: the holder does not conclude it was taken over.
    expect(failing!.lost).toBeUndefined();
    await failing!.release();
  });
});

describe("withLease (R-ST-4)", () => {
  it("withLease releases after the operation, also when it throws, and answers null when busy", async () => {
    const lock = createInProcessLock();
    await expect(withLease(settings(lock), "e9", 0, async () => Promise.reject(new Error("boom")))).rejects.toThrow(
      "boom",
    );
    expect(await lock.isHeld("lock:e9")).toBe(false);
    const outer = await ExecutionLease.acquire(settings(lock), "e9", 0);
    expect(await withLease(settings(lock), "e9", 20, async () => "ran")).toBeNull();
    await outer!.release();
    expect(await withLease(settings(lock), "e9", 0, async () => "ran")).toBe("ran");
  });
});
