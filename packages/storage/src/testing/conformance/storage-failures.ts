import { randomUUID } from "node:crypto";
import { defineConnector } from "@codemode/core";
import { expect, it } from "vitest";
import { expectStatus, sleep } from "../story-helpers.js";
import { ledgerConnector, readsProgram, readsThenApplyProgram } from "./ledger.js";
import { runtimeName, type StorageSuite } from "./storage-suite.js";

/** R-ST-5: a store that fails surfaces as STORAGE_ERROR, never as "not found", and its record stays consistent. */
export function storageFailureStories(suite: StorageSuite): void {
  it("R-ST-5 a store that fails mid-pass and between calls gives STORAGE_ERROR — never NOT_FOUND — and no unhandled rejection", async () => {
    if (suite.cannotRun()) return;
    const storage = await suite.open();
    const name = runtimeName();
    const ledger = ledgerConnector();
    let breakNow = false;
    const breaker = defineConnector({
      name: "breaker",
      tools: {
        pull: {
          execute: async () => {
            if (breakNow) await suite.breakStorage(storage);
            return "pulled";
          },
        },
      },
    });
    const runtime = suite.runtimeOn(storage, { name, connectors: [ledger.connector, breaker], leaseMs: 500 });
    const paused = await runtime.execute({ code: readsThenApplyProgram(2) });
    expectStatus(paused, "paused");

    let brokenRunId = "";
    const rejections: unknown[] = [];
    const onRejection = (reason: unknown) => rejections.push(reason);
    process.on("unhandledRejection", onRejection);
    try {
      breakNow = true;
      const midPass = await runtime.execute({
        code: `async () => { const first = await breaker.pull({}); for (let i = 0; i < 5; i++) await ledger.read({ i }); return first; }`,
      });
      expectStatus(midPass, "error");
      expect(midPass.code).toBe("STORAGE_ERROR");
      brokenRunId = midPass.executionId;

      const approved = await runtime.approve({ executionId: paused.executionId });
      expectStatus(approved, "error");
      expect(approved.code).toBe("STORAGE_ERROR");
      const unknown = await runtime.approve({ executionId: randomUUID() });
      expectStatus(unknown, "error");
      expect(unknown.code).toBe("STORAGE_ERROR");
      const fresh = await runtime.execute({ code: readsProgram(1) });
      expectStatus(fresh, "error");
      expect(fresh.code).toBe("STORAGE_ERROR");
      // R-RT-3: "false" would say the action was not pending; the store could not say.
      await expect(runtime.reject({ executionId: paused.executionId, seq: 2 })).rejects.toMatchObject({
        name: "CodemodeError",
        code: "STORAGE_ERROR",
      });
      await expect(runtime.pending()).rejects.toMatchObject({ code: "STORAGE_ERROR" });
      await expect(runtime.execution(paused.executionId)).rejects.toMatchObject({ code: "STORAGE_ERROR" });
      const rollback = await runtime.rollback({ executionId: paused.executionId });
      expect(rollback).toMatchObject({ code: "STORAGE_ERROR" });
      for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off("unhandledRejection", onRejection);
    }
    expect(rejections).toEqual([]);
    expect(ledger.applied).toEqual([]);

    if (suite.shared) {
      // The record stayed consistent: a new storage sees the paused run still paused, and the
      // broken pass as running with a lease that lapses, so expiry can end it.
      const reopened = await suite.open();
      const other = suite.runtimeOn(reopened, { name, connectors: [ledger.connector] });
      expect((await other.execution(paused.executionId))?.status).toBe("paused");
      const broken = await other.execution(brokenRunId);
      expect(broken?.log[0]).toMatchObject({ seq: 0, connector: "breaker", method: "pull" });
      if (broken?.status === "running") {
        await sleep(600);
        expect(await other.expirePaused({ maxAgeMs: 60_000 })).toEqual([brokenRunId]);
      }
      expect((await other.execution(brokenRunId))?.status).toBe("error");
      expectStatus(await other.approve({ executionId: paused.executionId }), "completed");
      expect(ledger.applied).toEqual([`${paused.executionId}:2`]);
    }
  });
}
