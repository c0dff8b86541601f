import { randomUUID } from "node:crypto";
import { type CodemodeRuntime, createCodemodeRuntime, defineConnector, type Outcome } from "@codemode/core";
import { type RedisClient, redisStorage } from "@codemode/storage/redis";
import {
  cuttableProxy,
  runExecutionIndexConformance,
  runStorageConformance,
  tcpUnreachable,
} from "@codemode/storage/testing";
import { createClient } from "@keyv/redis";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";

const REDIS_URL = process.env.CODEMODE_REDIS_URL ?? "redis://127.0.0.1:6379";
// Everything these tests write lives under this namespace and is deleted afterwards.
const NAMESPACE = `codemode-test-${randomUUID().slice(0, 8)}`;

let cleaner: RedisClient | undefined;
afterAll(async () => {
  if (await tcpUnreachable(REDIS_URL)) return;
  cleaner = createClient({ url: REDIS_URL }) as RedisClient;
  await cleaner.connect();
  const keys = await cleaner.keys(`${NAMESPACE}*`);
  if (keys.length > 0) await cleaner.del(keys);
  await cleaner.close();
});

runStorageConformance("redisStorage(url)", () => redisStorage(REDIS_URL, { namespace: NAMESPACE }), {
  unavailable: () => tcpUnreachable(REDIS_URL),
  fenced: true,
  dropLease: async (_storage, key) => {
    const client = createClient({ url: REDIS_URL }) as RedisClient;
    await client.connect();
    try {
      expect(await client.del(`${NAMESPACE}::${key}`)).toBe(1);
    } finally {
      await client.close();
    }
  },
});
runExecutionIndexConformance("redisStorage(url)", (namespace) => redisStorage(REDIS_URL, { namespace }), {
  unavailable: () => tcpUnreachable(REDIS_URL),
  namespaces: [NAMESPACE, `${NAMESPACE}-other`],
});

describe("redisStorage on a real Redis", () => {
  let unavailable: string | undefined;
  const runtimes: CodemodeRuntime[] = [];
  const closers: Array<() => Promise<unknown>> = [];

  beforeAll(async () => {
    unavailable = await tcpUnreachable(REDIS_URL);
    if (unavailable && process.env.CI)
      throw new Error(`Redis is not reachable at ${REDIS_URL} (${unavailable}); CI must provide it`);
  });
  afterEach(async () => {
    for (const runtime of runtimes.splice(0)) await runtime.close();
    for (const close of closers.splice(0)) await close().catch(() => undefined);
  });
  const cannotRun = () => {
    if (!unavailable) return false;
    console.warn(`story not run: Redis is not reachable at ${REDIS_URL} (${unavailable})`);
    return true;
  };

  it("keys carry the namespace once, leases and the execution index included", async () => {
    if (cannotRun()) return;
    const storage = redisStorage(REDIS_URL, { namespace: NAMESPACE });
    closers.push(() => storage.close());
    const name = `layout-${randomUUID().slice(0, 8)}`;
    const runtime = track(createCodemodeRuntime({ name, connectors: [gate()], storage }));
    const paused = await runtime.execute({ code: "async () => gate.open({})" });
    expectStatus(paused, "paused");
    const lease = await storage.lock.acquire(`cm:${name}:lock:${paused.executionId}`, { ttlMs: 5_000, waitMs: 0 });

    const raw = await rawClient();
    const keys = (await raw.keys(`*${name}*`)).sort();
    expect(keys).toEqual(
      [
        `${NAMESPACE}::cm:${name}:c:${paused.executionId}`,
        `${NAMESPACE}::cm:${name}:e:${paused.executionId}:0`,
        `${NAMESPACE}::cm:${name}:h:${paused.executionId}`,
        // The listing is the storage's own index: a hash of rows and a sorted set per status.
        `${NAMESPACE}::cm:${name}:ix`,
        `${NAMESPACE}::cm:${name}:ix:paused`,
        `${NAMESPACE}::cm:${name}:lock:${paused.executionId}`,
      ].sort(),
    );
    expect(await raw.get(`${NAMESPACE}::cm:${name}:lock:${paused.executionId}`)).toBe(lease!.token);
    await lease!.release();
  });

  it("R-ST-5 its connection killed mid-pass (CLIENT KILL), the server out of reach until the pass ended: STORAGE_ERROR, no unhandled rejection; after the reconnect the record is consistent and the runs go on", async () => {
    if (cannotRun()) return;
    // The client reconnects within a millisecond of a killed connection, sooner than the pass's
    // next (batched) write may come; through a proxy cut right after the kill, the pass meets the
    // outage whatever the timing, until the test restores the proxy.
    const proxy = await cuttableProxy(REDIS_URL);
    closers.push(() => proxy.close());
    const storage = redisStorage(proxy.url, { namespace: NAMESPACE, connectTimeoutMs: 500 });
    closers.push(() => storage.close());
    const client = (storage.keyv.store as { client: RedisClient }).client;
    const raw = await rawClient();
    const name = `kill-${randomUUID().slice(0, 8)}`;
    const applied: string[] = [];
    const killer = defineConnector({
      name: "killer",
      tools: {
        read: { execute: async (args: { i: number }) => ({ i: args.i }) },
        kill: {
          execute: async () => {
            const id = await client.sendCommand(["CLIENT", "ID"]);
            await raw.sendCommand(["CLIENT", "KILL", "ID", String(id)]);
            await proxy.cut();
            // Return once the storage's client has seen its connection go.
            for (let turn = 0; turn < 1_000 && client.isReady; turn++)
              await new Promise((resolve) => setTimeout(resolve, 1));
            return "killed";
          },
        },
      },
    });
    const runtime = track(createCodemodeRuntime({ name, connectors: [killer, gate(applied)], storage, leaseMs: 600 }));
    const paused = await runtime.execute({ code: "async () => gate.open({})" });
    expectStatus(paused, "paused");

    const rejections: unknown[] = [];
    const onRejection = (reason: unknown) => rejections.push(reason);
    process.on("unhandledRejection", onRejection);
    let outcome: Outcome;
    try {
      outcome = await runtime.execute({
        code: "async () => { await killer.read({ i: 0 }); await killer.kill({}); for (let i = 1; i < 5; i++) await killer.read({ i }); return 'done'; }",
      });
      await new Promise((resolve) => setTimeout(resolve, 50));
    } finally {
      process.off("unhandledRejection", onRejection);
    }
    expect(rejections).toEqual([]);
    expectStatus(outcome, "error");
    expect(outcome.code).toBe("STORAGE_ERROR");

    // The server is back: the client reconnects by itself.
    await proxy.restore();
    for (let turn = 0; turn < 400 && !client.isReady; turn++) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(client.isReady).toBe(true);
    const state = await runtime.execution(outcome.executionId);
    expect(state?.log.slice(0, 2)).toMatchObject([
      { seq: 0, method: "read", state: "applied" },
      { seq: 1, method: "kill", state: "executing" },
    ]);
    expect(["running", "error"]).toContain(state?.status);
    if (state?.status === "running") {
      await new Promise((resolve) => setTimeout(resolve, 700));
      expect(await runtime.expirePaused({ maxAgeMs: 60_000 })).toEqual([outcome.executionId]);
    }
    expect((await runtime.execution(outcome.executionId))?.status).toBe("error");
    expectStatus(await runtime.approve({ executionId: paused.executionId }), "completed");
    expect(applied).toEqual([`${paused.executionId}:0`]);
  });

  it("the execution index: a sorted set per status whose members order by (createdAt, id), and a hash of rows", async () => {
    if (cannotRun()) return;
    const storage = redisStorage(REDIS_URL, { namespace: NAMESPACE });
    closers.push(() => storage.close());
    const name = `ix-layout-${randomUUID().slice(0, 8)}`;
    const index = storage.index.forRuntime(name);
    await index.put({ id: "run-1", status: "running", createdAt: 1_700_000_000_000, updatedAt: 1_700_000_000_000 });
    await index.put(
      { id: "run-1", status: "paused", createdAt: 1_700_000_000_000, updatedAt: 1_700_000_000_500 },
      "running",
    );

    const raw = await rawClient();
    const base = `${NAMESPACE}::cm:${name}:ix`;
    expect((await raw.keys(`*${name}*`)).sort()).toEqual([base, `${base}:paused`]);
    expect(await raw.zRangeWithScores(`${base}:paused`, 0, -1)).toEqual([
      { value: "0001700000000000:run-1", score: 0 },
    ]);
    expect(await raw.hGetAll(base)).toEqual({ "run-1": "paused 0001700000000000 1700000000500" });
    await index.remove({ id: "run-1", status: "paused", createdAt: 1_700_000_000_000 });
    expect(await raw.keys(`*${name}*`)).toEqual([]);
  });

  it("R-ST-5 the execution index while Redis is unreachable rejects, never answers an empty page; once it is back it lists again", async () => {
    if (cannotRun()) return;
    // A proxy that drops every connection and refuses new ones: a server that went away, for as
    // long as the test says (a killed connection alone reconnects within milliseconds).
    const proxy = await cuttableProxy(REDIS_URL);
    closers.push(() => proxy.close());
    const storage = redisStorage(proxy.url, { namespace: NAMESPACE, connectTimeoutMs: 500 });
    closers.push(() => storage.close());
    const index = storage.index.forRuntime(`ix-cut-${randomUUID().slice(0, 8)}`);
    const row = { id: "run-1", status: "paused" as const, createdAt: 1_700_000_000_000, updatedAt: 1_700_000_000_000 };
    await index.put(row);

    await proxy.cut();
    await expect(index.list({ limit: 10 })).rejects.toThrow();
    await expect(index.count(["paused"])).rejects.toThrow();
    await expect(index.put({ ...row, status: "completed" }, "paused")).rejects.toThrow();

    await proxy.restore();
    let listed: unknown;
    for (let attempt = 0; attempt < 100; attempt++) {
      listed = await index.list({ limit: 10 }).catch(() => undefined);
      if (listed) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(listed).toEqual([row]);
  });

  it("R-ST-5 nothing listening at the URL: STORAGE_ERROR within the connect timeout, never NOT_FOUND", async () => {
    const storage = redisStorage("redis://127.0.0.1:1", { namespace: NAMESPACE, connectTimeoutMs: 300 });
    closers.push(() => storage.close());
    const runtime = track(createCodemodeRuntime({ connectors: [gate()], storage }));
    const started = Date.now();
    const executed = await runtime.execute({ code: "async () => gate.open({})" });
    expectStatus(executed, "error");
    expect(executed.code).toBe("STORAGE_ERROR");
    const approved = await runtime.approve({ executionId: randomUUID() });
    expectStatus(approved, "error");
    expect(approved.code).toBe("STORAGE_ERROR");
    await expect(runtime.expirePaused()).rejects.toMatchObject({ name: "CodemodeError", code: "STORAGE_ERROR" });
    await expect(runtime.executions()).rejects.toMatchObject({ code: "STORAGE_ERROR" });
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it("a client passed in is used as it is and left open on close()", async () => {
    if (cannotRun()) return;
    const client = createClient({ url: REDIS_URL, disableOfflineQueue: true }) as RedisClient;
    client.on("error", () => undefined);
    await client.connect();
    closers.push(() => client.close());
    const storage = redisStorage(client, { namespace: NAMESPACE });
    const runtime = track(
      createCodemodeRuntime({ connectors: [gate()], storage, name: `given-${randomUUID().slice(0, 8)}` }),
    );
    expectStatus(await runtime.execute({ code: "async () => gate.open({})" }), "paused");
    await storage.close();
    expect(client.isReady).toBe(true);
    expect(await client.ping()).toBe("PONG");
    // The storage itself refuses work once closed.
    const afterClose = await runtime.execute({ code: "async () => 1" });
    expectStatus(afterClose, "error");
    expect(afterClose.code).toBe("STORAGE_ERROR");
  });

  function track(runtime: CodemodeRuntime): CodemodeRuntime {
    runtimes.push(runtime);
    return runtime;
  }

  async function rawClient(): Promise<RedisClient> {
    const client = createClient({ url: REDIS_URL }) as RedisClient;
    await client.connect();
    closers.push(() => client.close());
    return client;
  }
});

/** One gated tool; records the idempotency key of each applied call. */
function gate(applied: string[] = []) {
  return defineConnector({
    name: "gate",
    tools: {
      open: {
        requiresApproval: true,
        execute: async (_args: unknown, context) => {
          applied.push(context.idempotencyKey);
          return "opened";
        },
      },
    },
  });
}

function expectStatus<S extends Outcome["status"]>(
  outcome: Outcome,
  status: S,
): asserts outcome is Extract<Outcome, { status: S }> {
  if (outcome.status !== status) throw new Error(`expected ${status}, got ${JSON.stringify(outcome).slice(0, 600)}`);
}
