/**
 * Storage stories (R-ST-1, R-ST-2, R-ST-3): what a pass writes and reads, resuming from the store
 * alone, and per-name namespacing. Store failures (R-ST-5) are in storage-failures.test.ts and
 * storage-read-failures.test.ts, the same stories over a real Redis in storage-redis.test.ts.
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
} from "./storage-fixtures.ts";

closeRuntimesAfterEach();

describe("R-ST-1 recording a call writes that entry, not the whole execution", () => {
  async function bytesPerCall(calls: number): Promise<number> {
    const { store, effects, runtime } = inventoryRuntime();
    const outcome = await runtime.execute({ code: readsProgram(calls) });
    expectStatus(outcome, "completed");
    expect(outcome.result).toBe(calls);
    expect(effects).toHaveLength(calls);
    return store.bytesWritten / calls;
  }

  it("bytes written per call stay flat from a 10-call log to a 1,000-call log", async () => {
    const perCallAt10 = await bytesPerCall(10);
    const perCallAt1000 = await bytesPerCall(1000);
    const ratio = perCallAt1000 / perCallAt10;
    console.log(
      `R-ST-1 bytes written per call: ${perCallAt10.toFixed(1)} at 10 calls, ${perCallAt1000.toFixed(1)} at 1,000 calls (ratio ${ratio.toFixed(3)}, target ≤ 1.1)`,
    );
    expect(ratio).toBeLessThanOrEqual(1.1);
  });
});

describe("R-ST-2 a pass reads the log in one batched read", () => {
  async function approvePassReads(reads: number) {
    const { store, effects, runtime } = inventoryRuntime();
    const paused = await runtime.execute({ code: readsThenReserveProgram(reads) });
    expectStatus(paused, "paused");
    expect(paused.pending[0]).toMatchObject({ seq: reads, connector: "inventory", method: "reserve" });
    const executionId = paused.executionId;

    store.resetCounters();
    effects.length = 0;
    const done = await runtime.approve({ executionId });
    expectStatus(done, "completed");
    expect(done.result).toEqual({ total: reads, reservation: "r-item-0" });
    // Only the approved call ran; every read replayed from the log.
    expect(effects.map((effect) => effect.method)).toEqual(["reserve"]);

    const entryKey = `:e:${executionId}:`;
    const logLoads = store.getManyKeys.filter((keys) => keys.some((key) => key.includes(entryKey)));
    const entryGets = store.getKeys.filter((key) => key.includes(entryKey));
    const headGets = store.getKeys.filter((key) => key.endsWith(`:h:${executionId}`));
    return { logLoads, entryGets, headGets, gets: store.counts.get, getManys: store.counts.getMany };
  }

  it("pauses after 40 reads, approve loads the whole log with one getMany and replays without store reads", async () => {
    const withFew = await approvePassReads(5);
    const withMany = await approvePassReads(40);
    console.log(
      `R-ST-2 store reads during approve: ${withFew.gets} get + ${withFew.getManys} getMany with 5 replayed calls, ` +
        `${withMany.gets} get + ${withMany.getManys} getMany with 40 replayed calls`,
    );
    expect(withMany.logLoads).toHaveLength(1);
    // The one load covers every recorded seq (40 reads and the pending call).
    const loadedKeys = withMany.logLoads[0]!;
    for (let seq = 0; seq <= 40; seq++)
      expect(loadedKeys.some((key) => key.endsWith(`:${seq}`) && key.includes(":e:"))).toBe(true);
    expect(withMany.entryGets).toEqual([]);
    expect(withMany.headGets).toHaveLength(1);
    // Replayed calls cost no round trip: the reads of a pass do not grow with the calls it replays.
    expect(withMany.gets).toBe(withFew.gets);
    expect(withMany.getManys).toBe(withFew.getManys);
    expect(withFew.logLoads).toHaveLength(1);
  });
});

describe("R-ST-3 a paused execution resumes from the store alone", () => {
  it("pauses on one runtime, which closes; a second runtime over the same Keyv approves and completes", async () => {
    const store = new CountingStore();
    const keyv = new Keyv({ store });
    const firstEffects: Effect[] = [];
    const first = createCodemodeRuntime({
      connectors: [inventoryConnector(firstEffects)],
      storage: keyv,
      limits: LIMITS,
    });
    const paused = await first.execute({ code: readsThenReserveProgram(3) });
    expectStatus(paused, "paused");
    await first.close();

    const secondEffects: Effect[] = [];
    const second = track(
      createCodemodeRuntime({ connectors: [inventoryConnector(secondEffects)], storage: keyv, limits: LIMITS }),
    );
    expect((await second.pending()).items).toEqual([
      {
        executionId: paused.executionId,
        seq: 3,
        connector: "inventory",
        method: "reserve",
        args: { key: "item-0" },
        pauseId: "3.1",
      },
    ]);
    const done = await second.approve({ executionId: paused.executionId, seq: 3, by: "ops" });
    expectStatus(done, "completed");
    expect(done.result).toEqual({ total: 3, reservation: "r-item-0" });
    // The first runtime did the reads and never the reservation; the second only the reservation.
    expect(firstEffects.map((effect) => effect.method)).toEqual(["read", "read", "read"]);
    expect(secondEffects.map((effect) => `${effect.method}@${effect.seq}`)).toEqual(["reserve@3"]);
    const state = await second.execution(paused.executionId);
    expect(state?.status).toBe("completed");
    expect(state?.log.at(-1)).toMatchObject({ seq: 3, state: "applied", decision: { approved: true, by: "ops" } });
  });

  it("resumes over a new Keyv instance on the same backing store (a restart)", async () => {
    const store = new CountingStore();
    const effects: Effect[] = [];
    const first = createCodemodeRuntime({
      connectors: [inventoryConnector(effects)],
      storage: new Keyv({ store }),
      limits: LIMITS,
    });
    const paused = await first.execute({ code: readsThenReserveProgram(2) });
    expectStatus(paused, "paused");
    await first.close();

    const second = track(
      createCodemodeRuntime({
        connectors: [inventoryConnector(effects)],
        storage: new Keyv({ store }),
        limits: LIMITS,
      }),
    );
    const done = await second.approve({ executionId: paused.executionId });
    expectStatus(done, "completed");
    expect(effects.map((effect) => effect.method)).toEqual(["read", "read", "reserve"]);
  });
});

describe("the runtime's name namespaces everything in a shared store", () => {
  it("two runtimes with different names over one Keyv do not see each other's executions", async () => {
    const keyv = new Keyv({ store: new CountingStore() });
    const effects: Effect[] = [];
    const shop = track(
      createCodemodeRuntime({ name: "shop", connectors: [inventoryConnector(effects)], storage: keyv, limits: LIMITS }),
    );
    const warehouse = track(
      createCodemodeRuntime({
        name: "warehouse",
        connectors: [inventoryConnector(effects)],
        storage: keyv,
        limits: LIMITS,
      }),
    );

    const shopPaused = await shop.execute({ code: readsThenReserveProgram(1) });
    expectStatus(shopPaused, "paused");
    const warehouseDone = await warehouse.execute({ code: readsProgram(2) });
    expectStatus(warehouseDone, "completed");

    expect((await shop.executions()).items.map((state) => state.id)).toEqual([shopPaused.executionId]);
    expect((await warehouse.executions()).items.map((state) => state.id)).toEqual([warehouseDone.executionId]);
    expect(await warehouse.execution(shopPaused.executionId)).toBeNull();
    expect(await shop.execution(warehouseDone.executionId)).toBeNull();
    expect((await warehouse.pending()).items).toEqual([]);
    expect((await shop.pending()).items.map((action) => action.executionId)).toEqual([shopPaused.executionId]);

    const crossApprove = await warehouse.approve({ executionId: shopPaused.executionId });
    expectStatus(crossApprove, "error");
    expect(crossApprove.code).toBe("NOT_FOUND");
    expect(await warehouse.reject({ executionId: shopPaused.executionId, seq: 1 })).toBe(false);
    expect((await shop.execution(shopPaused.executionId))?.status).toBe("paused");

    const done = await shop.approve({ executionId: shopPaused.executionId });
    expectStatus(done, "completed");
  });
});
