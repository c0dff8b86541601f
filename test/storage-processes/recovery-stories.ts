/**
 * Runs handed from one worker process to another on one store: a run paused in one completes in
 * another (R-ST-3); a worker frozen past its lease and woken changes nothing (R-ST-6); a worker
 * killed mid-pass has its run expired by another once its lease lapses, not before (R-RE-2).
 */
import { beforeAll, expect, it } from "vitest";
import { readThenApply, SHORT_LEASE_MS, type SharedWorkers } from "./setup.ts";
import type { Summary } from "./worker.ts";
import { Worker } from "./worker-process.ts";

/** The stories of runs handed over between workers, within a store's describe. */
export function recoveryStories(shared: SharedWorkers): void {
  const { backend, extra, cannotRun, runtimeName } = shared;
  let first: Worker;
  let second: Worker;
  beforeAll(() => {
    ({ first, second } = shared);
  });
  it("R-ST-3 a run paused in one process completes after approve in another, which runs only the approved action", async () => {
    if (cannotRun()) return;
    const name = runtimeName();
    const starter = await Worker.start(backend.config("starter"));
    extra.push(starter);
    const paused = await starter.ask<Summary>({ op: "execute", name, code: readThenApply });
    expect(paused.status).toBe("paused");
    await starter.stop();

    const done = await second.ask<Summary>({ op: "approve", name, executionId: paused.executionId });
    expect(done).toEqual({ executionId: paused.executionId, status: "completed" });
    expect((await backend.effects()).get(`${paused.executionId}:1`)).toBe(1);
    expect(await first.ask<string[]>({ op: "status", name, executionIds: [paused.executionId] })).toEqual([
      "completed",
    ]);
  }, 60_000);

  /**
   * Issue "fencing": a worker frozen (SIGSTOP) for three times its lease while another process
   * recovers and completes its run, then woken (SIGCONT). The woken pass must change nothing.
   */
  const frozenWorkerStory = async (options: {
    code: string;
    freezeOn: "slow" | "noted";
    recovered: Summary["status"];
  }) => {
    const name = runtimeName();
    const frozen = await Worker.start(backend.config("frozen", SHORT_LEASE_MS));
    extra.push(frozen);
    const wokenOutcome = frozen.ask<Summary>({ op: "execute", name, code: options.code });
    // Awaited below; a story that fails before that must not leave it rejecting unhandled.
    wokenOutcome.catch(() => undefined);
    const inside = await frozen.event(options.freezeOn, 20_000);
    process.kill(frozen.child.pid!, "SIGSTOP");
    const frozenAt = Date.now();
    const executionId = String(inside.executionId);
    try {
      // Recovered by another process once the frozen worker's lease lapsed.
      let recovered: Summary[] = [];
      while (recovered.length === 0) {
        expect(Date.now() - frozenAt, "the run is recovered once the frozen worker's lease lapsed").toBeLessThan(
          SHORT_LEASE_MS * 3,
        );
        await new Promise((resolve) => setTimeout(resolve, 100));
        recovered = await second.ask<Summary[]>({ op: "recover", name, executionId });
      }
      expect(recovered.map((outcome) => outcome.status)).toEqual([options.recovered]);
      if (options.recovered === "paused") {
        // The interrupted tool asks first (onInterrupted: "ask"): a person approves it here.
        expect(await second.ask<Summary>({ op: "approve", name, executionId })).toEqual({
          executionId,
          status: "completed",
        });
      }
      expect(await second.ask<string[]>({ op: "status", name, executionIds: [executionId] })).toEqual(["completed"]);
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, frozenAt + SHORT_LEASE_MS * 3 - Date.now())));
    } finally {
      process.kill(frozen.child.pid!, "SIGCONT");
    }
    const before = await backend.raw(executionId);
    expect(Object.keys(before).length).toBeGreaterThanOrEqual(4);
    // The woken pass ends as taken over, without an unhandled error, and the worker lives on.
    const woken = await wokenOutcome;
    expect(woken).toMatchObject({ executionId, status: "error", code: "BUSY" });
    expect(woken.error).toMatch(/taken over/);
    expect(await frozen.ask<string[]>({ op: "status", name, executionIds: [executionId] })).toEqual(["completed"]);
    expect(frozen.exited).toBe(false);
    expect(frozen.stderr).toBe("");
    // Nothing the woken pass did reached the store: head, code, log and result are byte-identical.
    expect(await backend.raw(executionId)).toEqual(before);
    return { executionId, frozen };
  };

  it("R-ST-6: a worker frozen inside a tool for three times its lease, woken after another process completed the run, writes nothing and runs no further tool", async () => {
    if (cannotRun()) return;
    const { executionId } = await frozenWorkerStory({
      code: `async () => { await ledger.read({ i: 0 }); const slow = await ledger.slow({ ms: 300 }); await ledger.note({ item: "after" }); return slow; }`,
      freezeOn: "slow",
      recovered: "paused",
    });
    const effects = await backend.effects();
    // The tool running when the lease lapsed finished (at least once per idempotency key); the call after it ran once, in the recovering process.
    expect(effects.get(`${executionId}:1`)).toBeLessThanOrEqual(2);
    expect(effects.get(`${executionId}:2`)).toBe(1);
  }, 90_000);

  it("R-ST-6: a worker frozen between two calls for three times its lease, woken after another process completed the run, writes nothing and runs no further tool", async () => {
    if (cannotRun()) return;
    // The program spins after the first note, so the freeze lands between the two calls.
    const { executionId } = await frozenWorkerStory({
      code: `async () => { await ledger.note({ item: "first" }); let spin = 0; for (let i = 0; i < 300000000; i++) spin += i % 3; await ledger.note({ item: "second" }); return spin; }`,
      freezeOn: "noted",
      recovered: "completed",
    });
    const effects = await backend.effects();
    expect(effects.get(`${executionId}:0`)).toBe(1);
    expect(effects.get(`${executionId}:1`)).toBe(1);
  }, 90_000);

  it("R-RE-2 a worker killed with SIGKILL mid-pass: another process expires the run once its lease lapses, not before, and nothing recorded is lost", async () => {
    if (cannotRun()) return;
    const name = runtimeName();
    const doomed = await Worker.start(backend.config("doomed", SHORT_LEASE_MS));
    extra.push(doomed);
    void doomed
      .ask({
        op: "execute",
        name,
        code: `async () => { await ledger.read({ i: 0 }); await ledger.stall({}); return "never"; }`,
      })
      .catch(() => undefined);
    const stalled = await doomed.event("stalled", 20_000);
    const executionId = String(stalled.executionId);
    await doomed.kill();

    // The lease is still live: the run looks like it has a host.
    expect(await first.ask<string[]>({ op: "expirePaused", name })).toEqual([]);
    const killedAt = Date.now();
    let expired: string[] = [];
    while (expired.length === 0 && Date.now() - killedAt < SHORT_LEASE_MS * 4) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      expired = await first.ask<string[]>({ op: "expirePaused", name });
    }
    expect(expired).toEqual([executionId]);
    expect(Date.now() - killedAt).toBeGreaterThan(SHORT_LEASE_MS / 3);
    expect(await second.ask<string[]>({ op: "expirePaused", name })).toEqual([]);
    expect(await second.ask<string[]>({ op: "status", name, executionIds: [executionId] })).toEqual(["error"]);
    expect(await second.ask({ op: "log", name, executionId })).toEqual([
      { seq: 0, method: "read", state: "applied" },
      { seq: 1, method: "stall", state: "executing" },
    ]);
  }, 60_000);
}
