// Stories on a real BullMQ backend, Redis then PostgreSQL: see testing/fleet.ts for how they run.
import { randomUUID } from "node:crypto";
import { createCodemodeRuntime, defineConnector } from "@codemode/core";
import { memoryStorage } from "@codemode/storage/memory";
import { redisStorage } from "@codemode/storage/redis";
import { tcpUnreachable } from "@codemode/storage/testing";
import { createClient } from "@keyv/redis";
import { describe, expect, it } from "vitest";
import { createCodemodeQueue } from "./create-queue.js";
import { createCodemodeWorker } from "./create-worker.js";
import { describeOnEachBackend, REDIS_URL, submit } from "./testing/fleet.js";

/** Shutting down: a worker finishes its pass before it stops, and a client the fleet borrowed stays open. */
describeOnEachBackend(({ skip, fleet }) => {
  it("worker.close() finishes the pass under way before it stops", async () => {
    if (skip()) return;
    let started = 0;
    const slow = defineConnector({
      name: "slow",
      tools: {
        wait: {
          execute: async () => {
            started++;
            await new Promise((resolve) => setTimeout(resolve, 400));
            return { waited: true };
          },
        },
      },
    });
    const runtime = createCodemodeRuntime({ connectors: [slow], storage: memoryStorage(), logger: { warn() {} } });
    const { queue, startWorker } = fleet(runtime);
    const worker = startWorker();
    const executionId = await submit(queue, "async () => slow.wait({})");
    // A first pass starts its sandbox processes: room for that on a busy machine.
    await expect.poll(() => started, { timeout: 15_000 }).toBe(1);
    await worker.close();
    expect(await runtime.outcome(executionId)).toMatchObject({ status: "completed", result: { waited: true } });
    expect(await queue.bullmq.getJobCounts("active", "waiting")).toEqual({ active: 0, waiting: 0 });
  });
});

describe("@codemode/bullmq on the storage's own node-redis client", () => {
  it("one client serves the store, the queue and the worker, and stays open for its owner", async () => {
    const unavailable = await tcpUnreachable(REDIS_URL);
    if (unavailable && process.env.CI) throw new Error(`Redis is not reachable (${unavailable}); CI must provide it`);
    if (unavailable) return void console.warn(`story not run: Redis is not reachable (${unavailable})`);
    // As redisStorage opens it from a URL: commands fail fast while the connection is down.
    const client = createClient({ url: REDIS_URL, disableOfflineQueue: true });
    client.on("error", () => undefined);
    await client.connect();
    const name = `cm-test-${randomUUID().slice(0, 8)}`;
    const storage = redisStorage(client, { namespace: name });
    const shop = defineConnector({ name: "shop", tools: { read: { execute: async () => ({ stock: 3 }) } } });
    const runtime = createCodemodeRuntime({ connectors: [shop], storage, logger: { warn() {} } });
    const queue = createCodemodeQueue({ runtime, connection: { redis: client }, name, logger: { warn() {} } });
    const worker = createCodemodeWorker({ runtime, connection: { redis: client }, name, logger: { warn() {} } });
    try {
      const submitted = await queue.submit({ code: "async () => (await shop.read({})).stock" });
      if ("status" in submitted) throw new Error(submitted.error);
      expect(await queue.waitForOutcome(submitted.executionId, { timeoutMs: 10_000 })).toMatchObject({
        status: "completed",
        result: 3,
      });
    } finally {
      await worker.close();
      await queue.bullmq.obliterate({ force: true });
      await queue.close();
      await runtime.close();
      await storage.close();
    }
    expect(client.isOpen).toBe(true);
    const keys = await client.keys(`${name}*`);
    if (keys.length > 0) await client.del(keys);
    await client.close();
  });
});
