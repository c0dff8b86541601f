/**
 * A store that fails mid-pass (R-ST-5): a call's result reaches the program before it is stored,
 * but a failed write stops the pass with STORAGE_ERROR; a store that stays down, one that recovers
 * at once, and one that fails while recording a pause leave a record consistent with the effects.
 */
import { createCodemodeRuntime } from "@codemode/core";
import Keyv from "keyv";
import { describe, expect, it } from "vitest";
import { expectStatus } from "./four-stores-fixtures.ts";
import {
  CountingStore,
  closeRuntimesAfterEach,
  expectLogConsistentWithEffects,
  inventoryConnector,
  inventoryRuntime,
  LIMITS,
  readsProgram,
  readsThenReserveProgram,
  withoutStrayRejections,
} from "./storage-fixtures.ts";

closeRuntimesAfterEach();

/** The position, among the keys a healthy run writes, of the first value matching `pattern`. */
async function keyPositionOfFirst(pattern: RegExp, code: string): Promise<number> {
  const probe = new CountingStore();
  const values: string[] = [];
  const set = probe.set.bind(probe);
  const setMany = probe.setMany.bind(probe);
  probe.set = async (key: string, value: unknown) => {
    values.push(String(value));
    return set(key, value);
  };
  probe.setMany = async (entries: Array<{ key: string; value: unknown }>) => {
    values.push(...entries.map((entry) => String(entry.value)));
    return setMany(entries);
  };
  const runtime = createCodemodeRuntime({
    connectors: [inventoryConnector([])],
    storage: new Keyv({ store: probe }),
    limits: LIMITS,
  });
  await runtime.execute({ code });
  await runtime.close();
  const position = values.findIndex((value) => pattern.test(value));
  expect(position).toBeGreaterThan(0);
  return position;
}

describe("R-ST-5 a store that fails mid-pass gives STORAGE_ERROR and a consistent record", () => {
  it("a call's result reaches the program before it is stored, but if storing it fails nothing runs after it and the pass ends STORAGE_ERROR", async () => {
    // Fail exactly the write that carries the first call's `applied` entry, whichever way it is
    // written (alone, or in one batch with the next call's write-ahead).
    const { store, effects, runtime } = inventoryRuntime();
    const carriesFirstResult = (key: string, value: unknown) =>
      /:e:[^:]+:0$/.test(key) && String(value).includes('\\"state\\":\\"applied\\"');
    const set = store.set.bind(store);
    const setMany = store.setMany.bind(store);
    let refused = 0;
    store.set = async (key: string, value: unknown) => {
      if (carriesFirstResult(key, value) && refused++ === 0) throw new Error("the store is down (write refused)");
      return set(key, value);
    };
    store.setMany = async (entries: Array<{ key: string; value: unknown }>) => {
      if (entries.some(({ key, value }) => carriesFirstResult(key, value)) && refused++ === 0)
        throw new Error("the store is down (write refused)");
      return setMany(entries);
    };
    const outcome = await runtime.execute({ code: readsProgram(3) });
    expectStatus(outcome, "error");
    expect(outcome.code).toBe("STORAGE_ERROR");
    // The first read ran; its result could not be stored, so the second read never ran.
    expect(effects.map((effect) => effect.seq)).toEqual([0]);
    expect(refused).toBe(1);
  });

  it("the store goes down after 15 writes and stays down until the pass ended: STORAGE_ERROR, then the record is readable", async () => {
    const { store, effects, runtime } = inventoryRuntime();
    store.writesBeforeFailure = 15;
    const outcome = await withoutStrayRejections(() => runtime.execute({ code: readsProgram(20) }));
    expectStatus(outcome, "error");
    expect(outcome.code).toBe("STORAGE_ERROR");
    expect(outcome.error).toMatch(/store/);
    expect(outcome.executionId).toEqual(expect.any(String));
    expect(effects.length).toBeGreaterThan(0);
    expect(effects.length).toBeLessThan(20);

    store.writesBeforeFailure = undefined;
    const state = await runtime.execution(outcome.executionId);
    expect(state).not.toBeNull();
    // Nothing could record the end of the pass: the execution still reads as running, with no
    // live lease, which is what expiry looks for.
    expect(["running", "error"]).toContain(state!.status);
    expectLogConsistentWithEffects(state!, effects);
  });

  it("one write fails and the store recovers at once: STORAGE_ERROR, recorded as the execution's error", async () => {
    const { store, effects, runtime } = inventoryRuntime();
    store.writesBeforeFailure = 12;
    store.failingWritesLeft = 1;
    const outcome = await withoutStrayRejections(() => runtime.execute({ code: readsProgram(20) }));
    expectStatus(outcome, "error");
    expect(outcome.code).toBe("STORAGE_ERROR");
    expect(outcome.calls?.length).toBeGreaterThan(0);

    const state = await runtime.execution(outcome.executionId);
    expect(state).not.toBeNull();
    expect(["running", "error"]).toContain(state!.status);
    if (state!.status === "error") expect(state!.errorCode).toBe("STORAGE_ERROR");
    expectLogConsistentWithEffects(state!, effects);
    // A failed execution is not approvable.
    const again = await runtime.approve({ executionId: outcome.executionId });
    expectStatus(again, "error");
    expect(["NOT_PAUSED", "STORAGE_ERROR"]).toContain(again.code);
  });

  it("the store fails while recording a pause: STORAGE_ERROR, not paused, and the gated call never ran", async () => {
    const { store, effects, runtime } = inventoryRuntime();
    // Fail from the write of the pending entry of `reserve` at seq 1 on: its position among the
    // keys written comes from a healthy run of the same program (listing writes move it).
    store.writesBeforeFailure = await keyPositionOfFirst(/\\"state\\":\\"pending\\"/, readsThenReserveProgram(1));
    const outcome = await withoutStrayRejections(() => runtime.execute({ code: readsThenReserveProgram(1) }));
    expectStatus(outcome, "error");
    expect(outcome.code).toBe("STORAGE_ERROR");
    expect(effects.map((effect) => effect.method)).toEqual(["read"]);

    store.writesBeforeFailure = undefined;
    const state = await runtime.execution(outcome.executionId);
    expect(state).not.toBeNull();
    expect(state!.status).not.toBe("paused");
    expect(["running", "error"]).toContain(state!.status);
    expectLogConsistentWithEffects(state!, effects);
    expect((await runtime.pending(outcome.executionId)).items).toEqual([]);
  });
});
