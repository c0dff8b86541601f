/**
 * The stories of the recover tests (test/recover-*.test.ts), one store at a time: a host killed
 * inside a call is recovered by another process (the call runs again with its idempotency key, a
 * read-only one is called again, an `onInterrupted: "ask"` one pauses); a host killed inside an
 * approved call is resumed or asked again; a live worker's run is never taken.
 */
import { afterAll, describe, expect, it } from "vitest";
import { LEASE_MS, type Summary, spawnWorker, stores, useRecoverStore } from "./harness.ts";

/**
 * The recover stories on one store (`sqlite`, `postgres` or `redis`): each store has its own test
 * file, so the three run side by side.
 */
export function recoverStories(storeName: "sqlite" | "postgres" | "redis"): void {
  const store = stores.find((candidate) => candidate.name === storeName)!;
  afterAll(async () => {
    if (!(await store.unavailable())) await store.cleanup();
  });
  describe(`runtime.recover across processes on ${store.name}`, () => {
    const helpers = useRecoverStore(store);
    killedCallStories(helpers);
    approvedCallStories(helpers);
  });
}

/** A worker killed inside a call, recovered by another process. */
function killedCallStories(helpers: ReturnType<typeof useRecoverStore>): void {
  const { store, skip, space, startRun, recoverUntilFound, recoverOnce } = helpers;

  it("R-RP-4: a worker killed inside a call is recovered by another process; the call runs again with the same idempotency key", async () => {
    if (skip()) return;
    const where = space();
    const { worker, executionId } = await startRun(
      where,
      "run",
      "async () => { const account = await ledger.read({}); const charge = await ledger.charge({ amount: 5 }); return { account, charge }; }",
    );
    await worker.kill();
    const outcomes = await recoverUntilFound(where);
    expect(outcomes).toEqual([
      {
        executionId,
        status: "completed",
        result: { account: { balance: 100 }, charge: { charged: 5, key: `${executionId}:1`, by: "recoverer" } },
      },
    ]);
    // The interrupted call ran once in each process, both times with the same key; the read replayed.
    expect(await store.attempts(where.attempts, where.namespace)).toEqual([
      `${executionId}:1 killed`,
      `${executionId}:1 recoverer`,
    ]);
    // Nothing is left to recover.
    expect(await recoverOnce(where)).toEqual([]);
  });

  it("readOnly: a worker killed inside a read-only call left no entry for it; the recovered run calls it again and records it once", async () => {
    if (skip()) return;
    const where = space();
    const { worker, executionId } = await startRun(
      where,
      "run",
      "async () => { const first = await ledger.lookup({ stall: true }); return first; }",
    );
    await worker.kill();
    const outcomes = await recoverUntilFound(where, executionId, true);
    expect(outcomes).toEqual([
      { executionId, status: "completed", result: { balance: 100, by: "recoverer" }, calls: ["0 lookup applied"] },
    ]);
    expect(await store.attempts(where.attempts, where.namespace)).toEqual([
      `${executionId}:0 killed`,
      `${executionId}:0 recoverer`,
    ]);
  });

  it("readOnly: a read-only result recorded without waiting lands before the next call's write-ahead, so a recovery replays it", async () => {
    if (skip()) return;
    const where = space();
    const { worker, executionId } = await startRun(
      where,
      "run",
      "async () => { const seen = await ledger.lookup({}); const charge = await ledger.charge({ amount: 5 }); return { seen, charge }; }",
    );
    await worker.kill();
    const outcomes = await recoverUntilFound(where, executionId, true);
    expect(outcomes).toEqual([
      {
        executionId,
        status: "completed",
        result: {
          seen: { balance: 100, by: "killed" },
          charge: { charged: 5, key: `${executionId}:1`, by: "recoverer" },
        },
        calls: ["0 lookup applied", "1 charge applied"],
      },
    ]);
    // The lookup ran once (replayed from the log); the interrupted charge ran again with its key.
    expect(await store.attempts(where.attempts, where.namespace)).toEqual([
      `${executionId}:0 killed`,
      `${executionId}:1 killed`,
      `${executionId}:1 recoverer`,
    ]);
  });

  it('R-RP-4b: with onInterrupted "ask" the recovered run pauses for a person instead of running the call twice', async () => {
    if (skip()) return;
    const where = space();
    const { worker, executionId } = await startRun(
      where,
      "run",
      "async () => { await ledger.read({}); return ledger.charge_ask({ amount: 7 }); }",
    );
    await worker.kill();
    const [outcome] = await recoverUntilFound(where, executionId);
    expect(outcome).toMatchObject({ executionId, status: "paused", pending: [{ seq: 1, method: "charge_ask" }] });
    expect(await store.attempts(where.attempts, where.namespace)).toEqual([`${executionId}:1 killed`]);
  });
}

/** A worker killed inside an approved call, and a live worker's run. */
function approvedCallStories(helpers: ReturnType<typeof useRecoverStore>): void {
  const { store, skip, space, base, startRun, recoverUntilFound, recoverOnce } = helpers;

  it('R-AP-9 R-RP-4b: a host dies inside an approved onInterrupted "ask" call; recover asks again in a new pause; the approval of the earlier pause decides nothing, one of the new pause runs it', async () => {
    if (skip()) return;
    const where = space();
    const starter = spawnWorker({
      ...base(where, "run", "starter"),
      code: "async () => { await ledger.read({}); return ledger.charge_approved_ask({ amount: 13 }); }",
    });
    const paused = (await starter.event("outcome")).outcome as Summary;
    await starter.kill();
    expect(paused).toMatchObject({ status: "paused", pending: [{ seq: 1, pauseId: "1.1" }] });
    const approver = spawnWorker({ ...base(where, "approve", "killed"), executionId: paused.executionId });
    await approver.event("inside-call");
    await approver.kill();
    const [asked] = await recoverUntilFound(where, paused.executionId);
    expect(asked).toMatchObject({ status: "paused", pending: [{ seq: 1, pauseId: "1.2" }] });

    const decide = async (pauseId: string) => {
      const decider = spawnWorker({
        ...base(where, "decide", "decider"),
        executionId: paused.executionId,
        decisions: [{ seq: 1, decision: "approve", pauseId }],
      });
      const outcome = (await decider.event("decided")).outcome as Summary;
      // Its writes are done once it reported; it lets go of the store (SQLite: the file) as it ends.
      await decider.kill();
      return outcome;
    };
    // The approval given before the crash, sent again: it answers a pause the call has left.
    expect(await decide("1.1")).toMatchObject({ status: "error", code: "NOT_PAUSED" });
    expect(await store.attempts(where.attempts, where.namespace)).toEqual([`${paused.executionId}:1 killed`]);
    expect(await decide("1.2")).toMatchObject({ status: "completed", result: { charged: 13, by: "decider" } });
    expect(await store.attempts(where.attempts, where.namespace)).toEqual([
      `${paused.executionId}:1 killed`,
      `${paused.executionId}:1 decider`,
    ]);
  });

  it("R-RP-4: a run approved for one call and killed inside it is resumed for that same call, without asking again", async () => {
    if (skip()) return;
    const where = space();
    const starter = spawnWorker({
      ...base(where, "run", "starter"),
      code: "async () => { await ledger.read({}); return ledger.charge_approved({ amount: 11 }); }",
    });
    const paused = (await starter.event("outcome")).outcome as Summary;
    await starter.kill();
    expect(paused).toMatchObject({ status: "paused", pending: [{ seq: 1, method: "charge_approved" }] });
    const approver = spawnWorker({ ...base(where, "approve", "killed"), executionId: paused.executionId });
    await approver.event("inside-call");
    await approver.kill();
    const outcomes = await recoverUntilFound(where, paused.executionId);
    expect(outcomes).toEqual([
      {
        executionId: paused.executionId,
        status: "completed",
        result: { charged: 11, key: `${paused.executionId}:1`, by: "recoverer" },
      },
    ]);
    expect(await store.attempts(where.attempts, where.namespace)).toEqual([
      `${paused.executionId}:1 killed`,
      `${paused.executionId}:1 recoverer`,
    ]);
  });

  it("a live worker's run is never taken, however long it runs; once that worker dies it is recovered", async () => {
    if (skip()) return;
    const where = space();
    const { worker, executionId } = await startRun(where, "hold", "async () => ledger.charge({ amount: 9 })");
    // Several lease lengths: a lease that was not renewed would have lapsed by now.
    await new Promise((resolve) => setTimeout(resolve, LEASE_MS * 3));
    expect(await recoverOnce(where, executionId)).toEqual([]);
    expect(await recoverOnce(where)).toEqual([]);
    await worker.kill();
    const outcomes = await recoverUntilFound(where, executionId);
    expect(outcomes).toEqual([
      { executionId, status: "completed", result: { charged: 9, key: `${executionId}:0`, by: "recoverer" } },
    ]);
  });
}
