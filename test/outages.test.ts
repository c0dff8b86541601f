import { randomUUID } from "node:crypto";
import { type CodemodeRuntime, createCodemodeRuntime, defineConnector } from "@codemode/core";
import { postgresStorage } from "@codemode/storage/postgres";
import { redisStorage } from "@codemode/storage/redis";
import { type CuttableProxy, cuttableProxy, tcpUnreachable } from "@codemode/storage/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * R-RT-3: no public method turns a store failure into absence. The store goes away for real
 * (a proxy in front of the server drops every connection and refuses new ones): `execute`,
 * `approve` and `rollback` answer STORAGE_ERROR as data; every read and control operation
 * rejects with `CodemodeError` STORAGE_ERROR — never `null`, `[]`, `false` or NOT_FOUND. Once
 * the server is back, nothing was lost: the paused run is approved and completes.
 */
const REDIS_URL = process.env.CODEMODE_REDIS_URL ?? "redis://127.0.0.1:6379";
const POSTGRES_URL = process.env.CODEMODE_POSTGRES_URL ?? "postgresql://postgres@127.0.0.1:5432/test";

const stores = [
  {
    name: "Redis",
    url: REDIS_URL,
    open: (url: string) =>
      redisStorage(url, { namespace: `outage-${randomUUID().slice(0, 8)}`, connectTimeoutMs: 1_000 }),
  },
  {
    name: "PostgreSQL",
    url: POSTGRES_URL,
    open: (url: string) =>
      postgresStorage(url, {
        namespace: `outage-${randomUUID().slice(0, 8)}`,
        pool: { connectionTimeoutMillis: 1_000 },
      }),
  },
];

for (const store of stores) {
  describe(`R-RT-3 every public method while ${store.name} is unreachable`, () => {
    let unavailable: string | undefined;
    let proxy: CuttableProxy;
    let runtime: CodemodeRuntime;
    let storage: { close(): Promise<void> };
    let pausedId = "";
    let completedId = "";
    const orders: string[] = [];

    beforeAll(async () => {
      unavailable = await tcpUnreachable(store.url);
      if (unavailable && process.env.CI)
        throw new Error(`${store.name} is not reachable at ${store.url} (${unavailable}); CI must provide it`);
      if (unavailable) return;
      proxy = await cuttableProxy(store.url);
      storage = store.open(proxy.url);
      const shop = defineConnector({
        name: "shop",
        tools: {
          order: {
            requiresApproval: true,
            execute: async ({ sku }: { sku: string }) => {
              orders.push(sku);
              return { orderId: `o-${sku}` };
            },
          },
          charge: { execute: async () => ({ chargeId: "c-1" }), revert: async () => undefined },
        },
      });
      runtime = createCodemodeRuntime({
        connectors: [shop],
        storage: storage as never,
        lockWaitMs: 500,
        logger: { warn() {} },
      });
      const paused = await runtime.execute({ code: "async () => shop.order({ sku: 'mug' })" });
      const completed = await runtime.execute({ code: "async () => shop.charge({})" });
      expect([paused.status, completed.status]).toEqual(["paused", "completed"]);
      pausedId = paused.executionId;
      completedId = completed.executionId;
      await runtime.saveSnippet("charge_once", { executionId: completedId });
      await proxy.cut();
    });

    afterAll(async () => {
      if (unavailable) return;
      await runtime.close();
      await storage.close();
      await proxy.close();
    });

    const skip = () => {
      if (unavailable) console.warn(`story not run: ${store.name} is not reachable (${unavailable})`);
      return unavailable !== undefined;
    };
    const storageError = { name: "CodemodeError", code: "STORAGE_ERROR" };

    it("execute, approve and rollback answer STORAGE_ERROR as data", async () => {
      if (skip()) return;
      expect(await runtime.execute({ code: "async () => shop.charge({})" })).toMatchObject({
        status: "error",
        code: "STORAGE_ERROR",
      });
      expect(await runtime.approve({ executionId: pausedId })).toMatchObject({
        status: "error",
        code: "STORAGE_ERROR",
      });
      expect(await runtime.rollback({ executionId: completedId })).toMatchObject({
        code: "STORAGE_ERROR",
        reverted: [],
      });
      expect(orders).toEqual([]);
    });

    it("reads reject with STORAGE_ERROR instead of answering null or []", async () => {
      if (skip()) return;
      await expect(runtime.execution(pausedId)).rejects.toMatchObject(storageError);
      await expect(runtime.executions()).rejects.toMatchObject(storageError);
      await expect(runtime.executions({ status: "paused" })).rejects.toMatchObject(storageError);
      await expect(runtime.pending()).rejects.toMatchObject(storageError);
      await expect(runtime.pending(pausedId)).rejects.toMatchObject(storageError);
      await expect(runtime.snippets()).rejects.toMatchObject(storageError);
      await expect(runtime.search("charge")).rejects.toMatchObject(storageError);
      await expect(runtime.describe("charge_once")).rejects.toMatchObject(storageError);
      await expect(runtime.replayCheck(pausedId)).rejects.toMatchObject(storageError);
      await expect(runtime.replayCheck({ status: "paused" })).rejects.toMatchObject(storageError);
      await expect(runtime.rerun()).rejects.toMatchObject(storageError);
      await expect(runtime.rerun({ executionId: completedId })).rejects.toMatchObject(storageError);
    });

    it("control operations reject with STORAGE_ERROR instead of answering false or 0", async () => {
      if (skip()) return;
      await expect(runtime.reject({ executionId: pausedId, seq: 0 })).rejects.toMatchObject(storageError);
      await expect(runtime.deleteExecution(completedId)).rejects.toMatchObject(storageError);
      await expect(runtime.pruneExecutions(0)).rejects.toMatchObject(storageError);
      await expect(runtime.expirePaused({ maxAgeMs: 0 })).rejects.toMatchObject(storageError);
      await expect(runtime.saveSnippet("again", { executionId: completedId })).rejects.toMatchObject(storageError);
      await expect(runtime.deleteSnippet("charge_once")).rejects.toMatchObject(storageError);
    });

    it("once the server is back nothing was lost: the paused run is approved and completes", async () => {
      if (skip()) return;
      await proxy.restore();
      let outcome = await runtime.approve({ executionId: pausedId });
      // A client may need a moment to reconnect; an outage is never reported as NOT_FOUND meanwhile.
      for (let attempt = 0; attempt < 50 && outcome.status === "error" && outcome.code === "STORAGE_ERROR"; attempt++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        outcome = await runtime.approve({ executionId: pausedId });
      }
      expect(outcome).toMatchObject({ status: "completed", result: { orderId: "o-mug" } });
      expect(orders).toEqual(["mug"]);
      expect((await runtime.snippets()).map((snippet) => snippet.name)).toEqual(["charge_once"]);
      expect((await runtime.executions()).items.map((item) => item.id).sort()).toEqual([pausedId, completedId].sort());
    });
  });
}
