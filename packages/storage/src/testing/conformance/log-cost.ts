import { expect, it } from "vitest";
import { countingKeyv, countingLock } from "../counting-keyv.js";
import { expectStatus } from "../story-helpers.js";
import { ledgerConnector, readsProgram, readsThenApplyProgram } from "./ledger.js";
import { runtimeName, type StorageSuite } from "./storage-suite.js";

/** What the log costs the store: per-entry writes (R-ST-1) and one batched read to resume (R-ST-2). */
export function logCostStories(suite: StorageSuite): void {
  const { cannotRun, open, runtimeOn } = suite;

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
      `${suite.name}: R-ST-1 characters written per call ${at10.toFixed(1)} at 10 calls, ${at1000.toFixed(1)} at 1,000 (ratio ${(at1000 / at10).toFixed(3)})`,
    );
    expect(at1000 / at10).toBeLessThanOrEqual(1.1);
  });

  it("R-ST-2 approve loads the whole log with one batched read, and replayed calls read nothing", async () => {
    if (cannotRun()) return;
    const storage = await open();
    const { keyv, counts, reset } = countingKeyv(storage.keyv);
    const ledger = ledgerConnector();
    const runtime = runtimeOn({ keyv, lock: storage.lock }, { name: runtimeName(), connectors: [ledger.connector] });
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
}
