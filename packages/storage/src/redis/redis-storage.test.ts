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
import { afterAll, describe, expect, it } from "vitest";
import { closeAll, expectStatus, expectStorageErrors, suiteHooks } from "../testing/story-helpers.js";

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
  const redis = realRedis();
  layoutStories(redis);
  outageStories(redis);
  givenClientStories(redis);
});

/** What the stories on a real Redis share: whether they can run, and what each opened, closed after it. */
function realRedis() {
  const runtimes: CodemodeRuntime[] = [];
  const opened: Array<{ close(): Promise<unknown> }> = [];
  const cannotRun = suiteHooks(
    `Redis at ${REDIS_URL}`,
    () => tcpUnreachable(REDIS_URL),
    async () => {
      for (const runtime of runtimes.splice(0)) await runtime.close();
      await closeAll(opened);
    },
  );
  /** Closes `closable` after the story. */
  const closeLater = <T extends { close(): Promise<unknown> }>(closable: T): T => {
    opened.push(closable);
    return closable;
  };
  return {
    cannotRun,
    closeLater,
    /** Closes `runtime` after the story, before what `closeLater` was given. */
    track(runtime: CodemodeRuntime): CodemodeRuntime {
      runtimes.push(runtime);
      return runtime;
    },
    /** A client of its own, to look at the keys as Redis holds them. */
    async rawClient(): Promise<RedisClient> {
      const client = createClient({ url: REDIS_URL }) as RedisClient;
      await client.connect();
      return closeLater(client);
    },
    /**
     * A storage that reaches Redis through a proxy: `proxy.cut()` drops every connection and refuses
     * new ones, a server that went away for as long as the story says (a killed connection alone
     * reconnects within milliseconds); `proxy.restore()` brings it back.
     */
    async storageBehindProxy() {
      const proxy = closeLater(await cuttableProxy(REDIS_URL));
      const storage = closeLater(redisStorage(proxy.url, { namespace: NAMESPACE, connectTimeoutMs: 500 }));
      return { proxy, storage };
    },
  };
}

type RealRedis = ReturnType<typeof realRedis>;

/** How the storage lays out its keys: the namespace once, leases and the execution index included. */
function layoutStories({ cannotRun, closeLater, track, rawClient }: RealRedis): void {
  it("keys carry the namespace once, leases and the execution index included", async () => {
    if (cannotRun()) return;
    const storage = closeLater(redisStorage(REDIS_URL, { namespace: NAMESPACE }));
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

  it("the execution index: a sorted set per status whose members order by (createdAt, id), and a hash of rows", async () => {
    if (cannotRun()) return;
    const storage = closeLater(redisStorage(REDIS_URL, { namespace: NAMESPACE }));
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
}

/** R-ST-5 when Redis goes away: a killed connection mid-pass, a server out of reach, nothing listening at all. */
function outageStories({ cannotRun, closeLater, track, rawClient, storageBehindProxy }: RealRedis): void {
  it("R-ST-5 its connection killed mid-pass (CLIENT KILL), the server out of reach until the pass ended: STORAGE_ERROR, no unhandled rejection; after the reconnect the record is consistent and the runs go on", async () => {
    if (cannotRun()) return;
    // The client reconnects within a millisecond of a killed connection, sooner than the pass's
    // next (batched) write may come; through a proxy cut right after the kill, the pass meets the
    // outage whatever the timing, until the test restores the proxy.
    const { proxy, storage } = await storageBehindProxy();
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

  it("R-ST-5 the execution index while Redis is unreachable rejects, never answers an empty page; once it is back it lists again", async () => {
    if (cannotRun()) return;
    const { proxy, storage } = await storageBehindProxy();
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
    const storage = closeLater(redisStorage("redis://127.0.0.1:1", { namespace: NAMESPACE, connectTimeoutMs: 300 }));
    const runtime = track(createCodemodeRuntime({ connectors: [gate()], storage }));
    const started = Date.now();
    await expectStorageErrors(runtime, "async () => gate.open({})");
    await expect(runtime.expirePaused()).rejects.toMatchObject({ name: "CodemodeError", code: "STORAGE_ERROR" });
    await expect(runtime.executions()).rejects.toMatchObject({ code: "STORAGE_ERROR" });
    expect(Date.now() - started).toBeLessThan(5_000);
  });
}

/** A client the caller passes in: the storage uses it as it is, and leaves it open. */
function givenClientStories({ cannotRun, closeLater, track }: RealRedis): void {
  it("a client passed in is used as it is and left open on close()", async () => {
    if (cannotRun()) return;
    const client = createClient({ url: REDIS_URL, disableOfflineQueue: true }) as RedisClient;
    client.on("error", () => undefined);
    await client.connect();
    closeLater(client);
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
}

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
