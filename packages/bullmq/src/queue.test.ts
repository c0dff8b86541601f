/**
 * The queue and the worker on a real BullMQ backend — Redis, then PostgreSQL (BullMQ's own
 * backend) — with the runs in an in-process store. Skipped with a printed reason when the server
 * is down, and failing when `CI` is set.
 */
import { randomUUID } from "node:crypto";
import { type CodemodeRuntime, createCodemodeRuntime, defineConnector, type Outcome } from "@codemode/core";
import { memoryStorage } from "@codemode/storage/memory";
import { redisStorage } from "@codemode/storage/redis";
import { tcpUnreachable } from "@codemode/storage/testing";
import { createClient } from "@keyv/redis";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import type { CodemodeQueueConnection } from "./connection.js";
import { type CodemodeQueue, createCodemodeQueue } from "./create-queue.js";
import { type CodemodeWorker, createCodemodeWorker } from "./create-worker.js";
import { approveJobId, type RetryOptions, runJobId } from "./jobs.js";
import type { CodemodeEventMap } from "./lifecycle-events.js";
import type { WorkerRuntime } from "./run-job.js";

const REDIS_URL = process.env.CODEMODE_REDIS_URL ?? "redis://127.0.0.1:6379";
const POSTGRES_URL = process.env.CODEMODE_POSTGRES_URL ?? "postgresql://postgres@127.0.0.1:5432/test";

const backends: Array<{ name: string; url: string; connection: () => CodemodeQueueConnection }> = [
  { name: "Redis", url: REDIS_URL, connection: () => ({ redis: REDIS_URL }) },
  {
    name: "PostgreSQL",
    url: POSTGRES_URL,
    connection: () => ({ postgres: { connectionString: POSTGRES_URL, max: 4 } }),
  },
];

function shopRuntime() {
  const ran = { read: 0, order: 0 };
  const shop = defineConnector({
    name: "shop",
    tools: {
      read: {
        execute: async () => {
          ran.read++;
          return { stock: 3 };
        },
      },
      order: {
        requiresApproval: true,
        execute: async (args: { sku: string }) => {
          ran.order++;
          return { orderId: `o-${args.sku}` };
        },
      },
    },
  });
  const storage = memoryStorage();
  const runtime = createCodemodeRuntime({ connectors: [shop], storage, logger: { warn() {} } });
  return { runtime, ran, storage };
}

const ORDER = "async () => { const { stock } = await shop.read({}); return shop.order({ sku: 'mug', stock }); }";

for (const backend of backends) {
  describe(`@codemode/bullmq on ${backend.name}`, () => {
    let unavailable: string | undefined;
    const opened: Array<{ close(): Promise<void> }> = [];
    beforeAll(async () => {
      unavailable = await tcpUnreachable(backend.url);
      if (unavailable && process.env.CI)
        throw new Error(`${backend.name} is not reachable (${unavailable}); CI must provide it`);
    });
    afterEach(async () => {
      for (const thing of opened.splice(0).reverse()) await thing.close();
    });
    const skip = () => {
      if (unavailable) console.warn(`story not run: ${backend.name} is not reachable (${unavailable})`);
      return unavailable !== undefined;
    };

    /** A fleet in one process: a queue, and workers started on demand, on a queue name of its own. */
    function fleet(runtime: CodemodeRuntime, retry: RetryOptions = {}) {
      const name = `cm-test-${randomUUID().slice(0, 8)}`;
      const queue = createCodemodeQueue({
        runtime,
        connection: backend.connection(),
        name,
        retry: { delayMs: 20, ...retry },
        logger: { warn() {} },
      });
      opened.push({
        async close() {
          await queue.bullmq.obliterate({ force: true }).catch(() => undefined);
          await queue.close();
          await runtime.close();
        },
      });
      const startWorker = (workerRuntime: WorkerRuntime = runtime) => {
        const worker = createCodemodeWorker({
          runtime: workerRuntime,
          connection: backend.connection(),
          name,
          concurrency: 2,
          lockDurationMs: 2_000,
          stalledIntervalMs: 1_000,
          logger: { warn() {} },
        });
        opened.splice(1, 0, worker);
        return worker;
      };
      return { queue, startWorker };
    }

    async function submit(queue: CodemodeQueue, code: string): Promise<string> {
      const submitted = await queue.submit({ code });
      if ("status" in submitted) throw new Error(`submit failed: ${submitted.error}`);
      return submitted.executionId;
    }

    it("a duplicate run or approve job is one job: the approved call runs once", async () => {
      if (skip()) return;
      const { runtime, ran } = shopRuntime();
      const { queue, startWorker } = fleet(runtime);
      const executionId = await submit(queue, ORDER);
      await queue.requeue(executionId);
      await queue.requeue(executionId);
      expect(await queue.bullmq.getJobCounts("waiting")).toEqual({ waiting: 1 });
      startWorker();
      expect(await queue.waitForOutcome(executionId, { timeoutMs: 10_000 })).toMatchObject({
        status: "paused",
        pending: [{ seq: 1, method: "order" }],
      });

      const [first, second] = await Promise.all([
        queue.approve({ executionId, by: "ann" }),
        queue.approve({ executionId, seq: 1, by: "bob" }),
      ]);
      expect(first).toEqual({ executionId, seq: 1 });
      expect(second).toEqual({ executionId, seq: 1 });
      expect(await queue.waitForOutcome(executionId, { timeoutMs: 10_000 })).toMatchObject({
        status: "completed",
        result: { orderId: "o-mug" },
      });
      expect(ran).toEqual({ read: 1, order: 1 });
      // Once done, a late click is refused before any job is queued.
      expect(await queue.approve({ executionId, seq: 1 })).toMatchObject({ status: "error", code: "NOT_PAUSED" });
      expect(await queue.approve({ executionId: "no-such-run" })).toMatchObject({ status: "error", code: "NOT_FOUND" });
    });

    it("retries STORAGE_ERROR and BUSY outcomes with backoff, and never the program's own errors", async () => {
      if (skip()) return;
      const { runtime } = shopRuntime();
      const { queue, startWorker } = fleet(runtime);
      const failures = { recover: 2, approve: 1 };
      const flaky: WorkerRuntime = {
        outcome: (id) => runtime.outcome(id),
        recover: async (options) =>
          failures.recover-- > 0
            ? [
                {
                  status: "error",
                  executionId: options?.executionId ?? "",
                  code: "STORAGE_ERROR",
                  error: "connection reset",
                } satisfies Outcome,
              ]
            : runtime.recover(options),
        approve: async (input) =>
          failures.approve-- > 0
            ? { status: "error", executionId: input.executionId, code: "BUSY", error: "held" }
            : runtime.approve(input),
      };
      const worker: CodemodeWorker = startWorker(flaky);
      const attempts: Record<string, number> = {};
      worker.on("completed", (job) => (attempts[job.id ?? ""] = job.attemptsMade));

      const ordering = await submit(queue, ORDER);
      expect(await queue.waitForOutcome(ordering, { timeoutMs: 10_000 })).toMatchObject({ status: "paused" });
      // attemptsMade counts the successful attempt too: two failures, then the pass. The store has the
      // outcome a moment before BullMQ marks the job completed, hence the poll.
      await expect.poll(() => attempts[`run_${ordering}`]).toBe(3);
      await queue.approve({ executionId: ordering });
      expect(await queue.waitForOutcome(ordering, { timeoutMs: 10_000 })).toMatchObject({ status: "completed" });
      await expect.poll(() => attempts[`approve_${ordering}_1`]).toBe(2);

      const failing = await submit(queue, "async () => { await shop.read({}); throw new Error('out of mugs'); }");
      expect(await queue.waitForOutcome(failing, { timeoutMs: 10_000 })).toMatchObject({
        status: "error",
        code: "SANDBOX_ERROR",
        error: expect.stringContaining("out of mugs"),
      });
      await expect.poll(() => attempts[`run_${failing}`]).toBe(1);
    });

    it("R-AP-2, R-AP-5, R-AP-6: an approve job that gave up (its worker lacked the connector) runs again when the call is approved again, once, and the run completes", async () => {
      if (skip()) return;
      const { runtime, ran, storage } = shopRuntime();
      const { queue, startWorker } = fleet(runtime, { attempts: 1 });
      const first = startWorker();
      const executionId = await submit(queue, ORDER);
      expect(await queue.waitForOutcome(executionId, { timeoutMs: 10_000 })).toMatchObject({
        status: "paused",
        pending: [{ seq: 1 }],
      });
      await first.close();

      // A worker deployed without the shop connector answers MISSING_CONNECTOR; with one attempt the job gives up.
      const withoutShop = createCodemodeRuntime({ connectors: [], storage, logger: { warn() {} } });
      opened.push(withoutShop);
      const lacking = startWorker(withoutShop);
      expect(await queue.approve({ executionId, by: "ann" })).toEqual({ executionId, seq: 1 });
      await expect
        .poll(() => queue.bullmq.getJobState(approveJobId(executionId, 1)), { timeout: 10_000 })
        .toBe("failed");
      await lacking.close();
      // The approval never ran: the run is still paused at that call, and says so.
      expect(await queue.waitForOutcome(executionId, { timeoutMs: 1_000 })).toMatchObject({
        status: "paused",
        pending: [{ seq: 1 }],
      });

      // Approved again, by two people at once, with a worker that has the connector: the kept job runs again, once.
      startWorker();
      const again = await Promise.all([
        queue.approve({ executionId, seq: 1, by: "bob" }),
        queue.approve({ executionId, seq: 1, by: "cy" }),
      ]);
      expect(again).toEqual([
        { executionId, seq: 1 },
        { executionId, seq: 1 },
      ]);
      expect(await queue.waitForOutcome(executionId, { timeoutMs: 10_000 })).toMatchObject({
        status: "completed",
        result: { orderId: "o-mug" },
        // The audit trail names who approved it this time, not ann, whose approval never ran.
        calls: [{ seq: 0 }, { seq: 1, decision: { approved: true, by: expect.stringMatching(/^(bob|cy)$/) } }],
      });
      expect(ran).toEqual({ read: 1, order: 1 });
      expect(await queue.approve({ executionId, seq: 1 })).toMatchObject({ status: "error", code: "NOT_PAUSED" });
    });

    it("R-ST-5: a run job that gave up in a store outage is put back by requeue with all its attempts, once however many requeue at the same time", async () => {
      if (skip()) return;
      const { runtime } = shopRuntime();
      const { queue, startWorker } = fleet(runtime, { attempts: 2 });
      let outage = 2;
      const flaky: WorkerRuntime = {
        outcome: (id) => runtime.outcome(id),
        recover: async (options) =>
          outage-- > 0
            ? [
                {
                  status: "error",
                  executionId: options?.executionId ?? "",
                  code: "STORAGE_ERROR",
                  error: "connection reset",
                } satisfies Outcome,
              ]
            : runtime.recover(options),
        approve: (input) => runtime.approve(input),
      };
      const worker = startWorker(flaky);
      const attempts: Record<string, number> = {};
      worker.on("completed", (job) => (attempts[job.id ?? ""] = job.attemptsMade));
      const executionId = await submit(queue, ORDER);
      await expect.poll(() => queue.bullmq.getJobState(runJobId(executionId)), { timeout: 10_000 }).toBe("failed");
      expect(await queue.waitForOutcome(executionId, { timeoutMs: 300 })).toMatchObject({
        status: "error",
        code: "BUSY",
      });

      // The outage is not quite over: the put-back job needs both of its attempts again.
      outage = 1;
      await Promise.all([queue.requeue(executionId), queue.requeue(executionId)]);
      expect(await queue.waitForOutcome(executionId, { timeoutMs: 10_000 })).toMatchObject({
        status: "paused",
        pending: [{ seq: 1 }],
      });
      await expect.poll(() => attempts[runJobId(executionId)]).toBe(2);
    });

    it("waitForOutcome answers an outcome that landed before it was called, and waits while an approval is queued", async () => {
      if (skip()) return;
      const { runtime } = shopRuntime();
      const { queue, startWorker } = fleet(runtime);
      const executionId = await submit(queue, ORDER);
      // No worker yet: still running at the deadline.
      expect(await queue.waitForOutcome(executionId, { timeoutMs: 200 })).toMatchObject({
        status: "error",
        code: "BUSY",
      });
      const worker = startWorker();
      // pollMs far beyond the test: only the event can wake it.
      expect(await queue.waitForOutcome(executionId, { timeoutMs: 10_000, pollMs: 60_000 })).toMatchObject({
        status: "paused",
      });
      await worker.close();

      // A queue opened after the pause (a fresh reader that never saw its event) still answers at once.
      const late = createCodemodeQueue({
        runtime,
        connection: backend.connection(),
        name: queue.bullmq.name,
        logger: { warn() {} },
      });
      opened.push(late);
      expect(await late.waitForOutcome(executionId, { timeoutMs: 5_000, pollMs: 60_000 })).toMatchObject({
        status: "paused",
      });
      // Approved, no worker running: the pause is answered, so the wait goes on.
      expect(await late.approve({ executionId })).toEqual({ executionId, seq: 1 });
      expect(await late.waitForOutcome(executionId, { timeoutMs: 300 })).toMatchObject({
        status: "error",
        code: "BUSY",
        error: expect.stringMatching(/approved at seq 1/),
      });
      const waiting = late.waitForOutcome(executionId, { timeoutMs: 10_000, pollMs: 60_000 });
      startWorker();
      expect(await waiting).toMatchObject({ status: "completed", result: { orderId: "o-mug" } });
      expect(await late.waitForOutcome(executionId, { timeoutMs: 5_000, pollMs: 60_000 })).toMatchObject({
        status: "completed",
      });
      expect(await late.waitForOutcome("no-such-run")).toMatchObject({ status: "error", code: "NOT_FOUND" });
    });

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
      await expect.poll(() => started).toBe(1);
      await worker.close();
      expect(await runtime.outcome(executionId)).toMatchObject({ status: "completed", result: { waited: true } });
      expect(await queue.bullmq.getJobCounts("active", "waiting")).toEqual({ active: 0, waiting: 0 });
    });

    it("publishes paused, completed, error and rejected events to every queue of the fleet", async () => {
      if (skip()) return;
      const { runtime } = shopRuntime();
      const { queue, startWorker } = fleet(runtime);
      const inbox = createCodemodeQueue({
        runtime,
        connection: backend.connection(),
        name: queue.bullmq.name,
        logger: { warn() {} },
      });
      opened.push(inbox);
      const seen: Array<{ type: string } & Record<string, unknown>> = [];
      for (const type of ["paused", "completed", "error", "rejected"] as const) {
        inbox.events.on(type, (event: CodemodeEventMap[typeof type]) => seen.push({ type, ...event }));
      }
      // The inbox reads only what is published once it is live: wait for that, as a server would at start-up.
      await inbox.ready();
      startWorker();
      const approved = await submit(queue, ORDER);
      const rejected = await submit(queue, ORDER);
      const failed = await submit(queue, "async () => { throw new Error('nope'); }");
      await expect.poll(() => seen.filter((event) => event.type === "paused").length, { timeout: 10_000 }).toBe(2);
      await queue.approve({ executionId: approved, by: "ann" });
      expect(await queue.reject({ executionId: rejected, seq: 1, by: "bob", reason: "too many mugs" })).toBe(true);
      expect(await queue.reject({ executionId: rejected, seq: 1 })).toBe(false);
      await expect.poll(() => seen.length, { timeout: 10_000 }).toBe(5);
      const of = (executionId: string) => seen.filter((event) => event.executionId === executionId);
      expect(of(approved)).toEqual([
        { type: "paused", executionId: approved, pending: [{ seq: 1, connector: "shop", method: "order" }] },
        { type: "completed", executionId: approved },
      ]);
      expect(of(rejected)).toEqual([
        { type: "paused", executionId: rejected, pending: [{ seq: 1, connector: "shop", method: "order" }] },
        { type: "rejected", executionId: rejected, seq: 1, by: "bob" },
      ]);
      expect(of(failed)).toEqual([
        { type: "error", executionId: failed, code: "SANDBOX_ERROR", error: expect.stringContaining("nope") },
      ]);
      expect(await queue.waitForOutcome(rejected, { timeoutMs: 1_000 })).toMatchObject({
        status: "error",
        code: "NOT_PAUSED",
        error: expect.stringMatching(/rejected by bob/),
      });
    });
  });
}

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
