/**
 * Workers outlive their store (issue 41): a worker started while its queue's store is down waits
 * for it, saying so, and takes jobs once it answers; a store that goes away under a running
 * worker and comes back finds it working. On Redis and on BullMQ's PostgreSQL backend, each
 * behind a proxy the story closes and opens (the suite's servers stay up). Before, BullMQ's
 * PostgreSQL connection remembered a failed first check, and `waitUntilReady` rejected forever.
 */
import { randomUUID } from "node:crypto";
import { createCodemodeRuntime } from "@codemode/core";
import { memoryStorage } from "@codemode/storage/memory";
import { tcpUnreachable } from "@codemode/storage/testing";
import { afterEach, describe, expect, it } from "vitest";
import type { CodemodeQueueConnection } from "./connection.js";
import { createCodemodeQueue } from "./create-queue.js";
import { createCodemodeWorker } from "./create-worker.js";
import { POSTGRES_URL, REDIS_URL } from "./testing/fleet.js";
import { countingShop } from "./testing/shop.js";
import { type TcpProxy, tcpProxy } from "./testing/tcp-proxy.js";

const backends = [
  {
    name: "Redis",
    url: REDIS_URL,
    through: (proxy: TcpProxy): CodemodeQueueConnection => {
      const url = new URL(REDIS_URL);
      url.port = String(proxy.port);
      return { redis: url.toString() };
    },
  },
  {
    name: "PostgreSQL",
    url: POSTGRES_URL,
    through: (proxy: TcpProxy): CodemodeQueueConnection => {
      const url = new URL(POSTGRES_URL);
      url.port = String(proxy.port);
      return { postgres: { connectionString: url.toString(), max: 4 } };
    },
  },
];

const closing: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close().catch(() => undefined);
});

for (const backend of backends) {
  describe(`a worker and its store on ${backend.name}`, () => {
    it("a worker started while its store is down waits for it, says so, and runs the jobs once it answers; and again after an outage", {
      timeout: 60_000,
    }, async () => {
      const unavailable = await tcpUnreachable(backend.url);
      if (unavailable && process.env.CI) throw new Error(`${backend.name} is not reachable (${unavailable})`);
      if (unavailable) return void console.warn(`story not run: ${backend.name} is not reachable (${unavailable})`);
      const proxy = await tcpProxy(Number(new URL(backend.url).port));
      closing.push(() => proxy.close());
      const { shop, ran } = countingShop();
      const runtime = createCodemodeRuntime({ connectors: [shop], storage: memoryStorage(), logger: { warn() {} } });
      closing.push(() => runtime.close());
      const said: string[] = [];
      const name = `outage-${randomUUID().slice(0, 8)}`;
      // The store is down when the worker starts.
      const worker = createCodemodeWorker({
        runtime,
        connection: backend.through(proxy),
        name,
        lockDurationMs: 2_000,
        stalledIntervalMs: 1_000,
        logger: { warn: (message) => said.push(message) },
      });
      closing.push(() => worker.close(true));
      let ready = false;
      const readiness = worker.waitUntilReady().then(() => {
        ready = true;
      });
      // It says why it waits (BullMQ's Redis client reports each refused reconnect; the PostgreSQL
      // backend's failed check is retried with back-off).
      const waiting = (line: string) => /does not answer|ECONNREFUSED/.test(line);
      await expect.poll(() => said.some(waiting), { timeout: 10_000 }).toBe(true);
      expect(ready).toBe(false);
      await proxy.open();
      await readiness;

      const queue = createCodemodeQueue({ runtime, connection: backend.through(proxy), name, logger: { warn() {} } });
      closing.push(() => queue.close());
      const first = await queue.submit({ code: "async () => (await shop.read({})).stock" });
      if ("status" in first) throw new Error(first.error);
      await expect
        .poll(async () => (await runtime.outcome(first.executionId))?.status, { timeout: 20_000 })
        .toBe("completed");

      // The store goes away under the running worker, and comes back.
      await proxy.close();
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      await proxy.open();
      const second = await queue.submit({ code: "async () => (await shop.read({})).stock" });
      if ("status" in second) throw new Error(second.error);
      await expect
        .poll(async () => (await runtime.outcome(second.executionId))?.status, { timeout: 20_000 })
        .toBe("completed");
      expect(ran.read).toBe(2);
    });

    it("back to work soon after the store: a fetch that met a refused connection tries again after 500 ms, and on PostgreSQL no wait for jobs outlasts drainDelay, even with jobs in their backoff", async () => {
      const runtime = createCodemodeRuntime({ storage: memoryStorage(), logger: { warn() {} } });
      closing.push(() => runtime.close());
      const worker = createCodemodeWorker({
        runtime,
        connection: backend.name === "Redis" ? { redis: backend.url } : { postgres: { connectionString: backend.url } },
        name: `waits-${randomUUID().slice(0, 8)}`,
        autorun: false,
        logger: { warn() {} },
      });
      closing.push(() => worker.close(true));
      const seam = worker as unknown as {
        opts: { runRetryDelay: number };
        getBlockTimeout(blockUntil: number): number;
      };
      expect(seam.opts.runRetryDelay).toBe(500);
      // A job delayed a minute from now: BullMQ would wait for it (Redis caps a wait at 10 s); a
      // PostgreSQL restart loses the notification of a job added meanwhile.
      const wait = seam.getBlockTimeout(Date.now() + 60_000);
      expect(wait).toBe(backend.name === "Redis" ? 10 : 1);
    });
  });
}
