import { expect, it } from "vitest";
import { expectStatus } from "../story-helpers.js";
import { ledgerConnector, readsThenApplyProgram } from "./ledger.js";
import { runtimeName, type StorageSuite } from "./storage-suite.js";

type Ledger = ReturnType<typeof ledgerConnector>;

/**
 * Resuming from the store alone (R-ST-3) on another runtime instance or after a restart, and
 * concurrent approvals of one run that run its action once (R-AP-6).
 */
export function resumeStories(suite: StorageSuite): void {
  const { cannotRun, open, runtimeOn } = suite;
  /** One storage and one runtime name: `instanceWith(ledger)` opens another instance of that app on it. */
  const openApp = async () => {
    const storage = await open();
    const name = runtimeName();
    return (ledger: Ledger) => runtimeOn(storage, { name, connectors: [ledger.connector] });
  };

  it("R-ST-3 a run paused on one runtime instance is approved on another and completes; the action runs once", async () => {
    if (cannotRun()) return;
    const instanceWith = await openApp();
    const firstLedger = ledgerConnector();
    const first = instanceWith(firstLedger);
    const paused = await first.execute({ code: readsThenApplyProgram(3) });
    expectStatus(paused, "paused");
    await first.close();

    const secondLedger = ledgerConnector();
    const second = instanceWith(secondLedger);
    expect((await second.pending()).items).toEqual([
      {
        executionId: paused.executionId,
        seq: 3,
        connector: "ledger",
        method: "apply",
        args: { item: "item-0" },
        pauseId: "3.1",
      },
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

  if (suite.shared) {
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
    const instanceWith = await openApp();
    const ledger = ledgerConnector();
    const first = instanceWith(ledger);
    const second = instanceWith(ledger);
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
}
