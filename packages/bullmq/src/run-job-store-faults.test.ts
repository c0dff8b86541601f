/**
 * A run a store fault ended while the store still answered (a write that failed): its record
 * says `error` STORAGE_ERROR, and retrying its job only read that again, for minutes. The fleet
 * now runs it again itself, through `runtime.rerun`'s rules, a bounded number of times.
 */
import { createCodemodeRuntime } from "@codemode/core";
import type { KeyvLike } from "@codemode/core/store";
import Keyv from "keyv";
import { describe, expect, it } from "vitest";
import { RetryableOutcomeError } from "./jobs.js";
import { runJob, STORE_FAULT_RERUNS } from "./run-job.js";
import { countingShop } from "./testing/shop.js";

/** An in-memory Keyv whose writes of log entries fail while `failing` says so (a store that answers, but not that write). */
function flakyStore() {
  const keyv = new Keyv();
  const control = { failing: 0 };
  const failIfEntry = (keys: string) => {
    if (control.failing > 0 && keys.includes(":e:")) {
      control.failing--;
      throw new Error("read ECONNRESET (a write the store did not take)");
    }
  };
  const store: KeyvLike = {
    get: (key: string) => keyv.get(key),
    getMany: (keys: string[]) => keyv.getMany(keys),
    delete: (key: string | string[]) => keyv.delete(key),
    deleteMany: (keys: string[]) => keyv.deleteMany(keys),
    async set(key: string, value: unknown, ttl?: number) {
      failIfEntry(key);
      return keyv.set(key, value, ttl);
    },
    async setMany(entries: Array<{ key: string; value: unknown }>) {
      failIfEntry(entries.map((entry) => entry.key).join(" "));
      return keyv.setMany(entries);
    },
  };
  return { store, control };
}

async function submittedRun(failing: number) {
  const { shop, ran } = countingShop();
  const { store, control } = flakyStore();
  const runtime = createCodemodeRuntime({ connectors: [shop], storage: store, logger: { warn() {} } });
  const submitted = await runtime.submit({ code: "async () => (await shop.read({})).stock" });
  if ("status" in submitted) throw new Error(`submit failed: ${submitted.error}`);
  control.failing = failing;
  return { runtime, ran, executionId: submitted.executionId, control };
}

describe("runJob after a store fault the store survived", () => {
  it("the run that ended STORAGE_ERROR is run again by the fleet and completes; nothing waits for an operator", async () => {
    const { runtime, ran, executionId } = await submittedRun(1);
    // The pass's write of its call failed: the run ended error STORAGE_ERROR, and the job retries.
    await expect(runJob(runtime, { name: "run", data: { executionId } })).rejects.toBeInstanceOf(RetryableOutcomeError);
    expect(await runtime.execution(executionId)).toMatchObject({ status: "error", errorCode: "STORAGE_ERROR" });
    // The next attempt reruns it (no longer only reading the error again).
    expect(await runJob(runtime, { name: "run", data: { executionId } })).toEqual({ executionId, status: "completed" });
    const state = await runtime.execution(executionId);
    expect(state).toMatchObject({ status: "completed", result: 3, reruns: [{ code: "STORAGE_ERROR" }] });
    // The write that failed was the call's write-ahead: the tool never ran then, and ran once in the rerun.
    expect(ran.read).toBe(1);
    await runtime.close();
  });

  it(`a run the store keeps failing is run again at most ${STORE_FAULT_RERUNS} times, then its job ends with the error for an operator`, async () => {
    const { runtime, executionId, control } = await submittedRun(1_000);
    await expect(runJob(runtime, { name: "run", data: { executionId } })).rejects.toBeInstanceOf(RetryableOutcomeError);
    for (let attempt = 0; attempt < STORE_FAULT_RERUNS; attempt++)
      await expect(runJob(runtime, { name: "run", data: { executionId } })).rejects.toBeInstanceOf(
        RetryableOutcomeError,
      );
    // Given up: the job completes with the recorded error instead of retrying without effect.
    expect(await runJob(runtime, { name: "run", data: { executionId } })).toMatchObject({
      executionId,
      status: "error",
      code: "STORAGE_ERROR",
    });
    expect((await runtime.execution(executionId))?.reruns).toHaveLength(STORE_FAULT_RERUNS);
    // The store recovers; an operator's rerun completes it.
    control.failing = 0;
    const report = await runtime.rerun({ executionId });
    expect(report.results[0]).toMatchObject({ action: "rerun", outcome: { status: "completed" } });
    await runtime.close();
  });
});
