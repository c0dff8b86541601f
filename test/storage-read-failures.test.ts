/**
 * A store whose reads fail (R-ST-5): a Keyv without throwOnErrors whose adapter's get throws, and
 * an adapter without getMany whose reads of log entries fail, give STORAGE_ERROR, not NOT_FOUND,
 * and nothing runs again.
 */
import { createCodemodeRuntime } from "@codemode/core";
import Keyv from "keyv";
import { describe, expect, it } from "vitest";
import { expectStatus } from "./four-stores-fixtures.ts";
import {
  CountingStore,
  closeRuntimesAfterEach,
  type Effect,
  inventoryConnector,
  inventoryRuntime,
  LIMITS,
  readsProgram,
  readsThenReserveProgram,
  track,
  withoutStrayRejections,
} from "./storage-fixtures.ts";

closeRuntimesAfterEach();

describe("R-ST-5 a store that fails mid-pass gives STORAGE_ERROR and a consistent record", () => {
  it("a Keyv created without throwOnErrors whose adapter's get throws: approve is STORAGE_ERROR, not NOT_FOUND", async () => {
    const store = new CountingStore();
    const keyv = new Keyv({ store }); // throwOnErrors defaults to false: Keyv would swallow the failure
    const effects: Effect[] = [];
    const runtime = track(
      createCodemodeRuntime({ connectors: [inventoryConnector(effects)], storage: keyv, limits: LIMITS }),
    );
    const paused = await runtime.execute({ code: readsThenReserveProgram(2) });
    expectStatus(paused, "paused");

    store.failReadsOf = /./;
    const outcome = await withoutStrayRejections(() => runtime.approve({ executionId: paused.executionId }));
    expectStatus(outcome, "error");
    expect(outcome.code).toBe("STORAGE_ERROR");
    expect(outcome.executionId).toBe(paused.executionId);
    expect(effects.map((effect) => effect.method)).toEqual(["read", "read"]);

    // A new execution cannot be started either, and says why.
    const fresh = await runtime.execute({ code: readsProgram(1) });
    expectStatus(fresh, "error");
    expect(fresh.code).toBe("STORAGE_ERROR");

    store.failReadsOf = undefined;
    const done = await runtime.approve({ executionId: paused.executionId });
    expectStatus(done, "completed");
    expect(effects.map((effect) => effect.method)).toEqual(["read", "read", "reserve"]);
  });

  it("an adapter without getMany whose reads of log entries fail: approve is STORAGE_ERROR and nothing runs again", async () => {
    const { store, effects, runtime } = inventoryRuntime(new CountingStore(false));
    const paused = await runtime.execute({ code: readsThenReserveProgram(3) });
    expectStatus(paused, "paused");

    // The head and the code read fine; the first log entry does not (a flaky connection).
    store.failReadsOf = new RegExp(`:e:${paused.executionId}:0$`);
    const outcome = await runtime.approve({ executionId: paused.executionId });
    expectStatus(outcome, "error");
    expect(outcome.code).toBe("STORAGE_ERROR");
    // The read at seq 0 was applied once; a log missing it must not run it again.
    expect(effects.map((effect) => `${effect.method}@${effect.seq}`)).toEqual(["read@0", "read@1", "read@2"]);

    store.failReadsOf = undefined;
    const done = await runtime.approve({ executionId: paused.executionId });
    expectStatus(done, "completed");
    expect(effects.map((effect) => `${effect.method}@${effect.seq}`)).toEqual([
      "read@0",
      "read@1",
      "read@2",
      "reserve@3",
    ]);
  });
});
