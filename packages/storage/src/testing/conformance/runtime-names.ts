import { expect, it } from "vitest";
import { expectStatus } from "../story-helpers.js";
import { ledgerConnector, readsProgram, readsThenApplyProgram } from "./ledger.js";
import { runtimeName, type StorageSuite } from "./storage-suite.js";

/** Namespacing by runtime name: runtimes of different names on one storage share nothing. */
export function runtimeNameStories(suite: StorageSuite): void {
  it("the runtime's name keeps histories apart: two runtimes on one storage do not see each other's runs", async () => {
    if (suite.cannotRun()) return;
    const storage = await suite.open();
    const ledger = ledgerConnector();
    const shop = suite.runtimeOn(storage, { name: runtimeName(), connectors: [ledger.connector] });
    const warehouse = suite.runtimeOn(storage, { name: runtimeName(), connectors: [ledger.connector] });
    const shopPaused = await shop.execute({ code: readsThenApplyProgram(1) });
    expectStatus(shopPaused, "paused");
    const warehouseDone = await warehouse.execute({ code: readsProgram(2) });
    expectStatus(warehouseDone, "completed");

    expect((await shop.executions()).items.map((state) => state.id)).toEqual([shopPaused.executionId]);
    expect((await warehouse.executions()).items.map((state) => state.id)).toEqual([warehouseDone.executionId]);
    expect(await warehouse.execution(shopPaused.executionId)).toBeNull();
    expect((await warehouse.pending()).items).toEqual([]);
    const crossApprove = await warehouse.approve({ executionId: shopPaused.executionId });
    expectStatus(crossApprove, "error");
    expect(crossApprove.code).toBe("NOT_FOUND");
    expect(await warehouse.reject({ executionId: shopPaused.executionId, seq: 1 })).toBe(false);
    expectStatus(await shop.approve({ executionId: shopPaused.executionId }), "completed");
    expect(ledger.applied).toEqual([`${shopPaused.executionId}:1`]);
  });
}
