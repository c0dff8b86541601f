/**
 * The storage stories over a real Redis at 127.0.0.1:6379 (R-ST-1, R-ST-2, R-ST-3, R-ST-5):
 * resuming on a new connection with one batched log read, bytes per call that stay flat, and an
 * error reply that is STORAGE_ERROR. Fails in CI when Redis is missing, skips elsewhere.
 */
import { randomUUID } from "node:crypto";
import { connect } from "node:net";
import { createCodemodeRuntime } from "@codemode/core";
import KeyvRedis from "@keyv/redis";
import Keyv from "keyv";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectStatus } from "./four-stores-fixtures.ts";
import {
  closeRuntimesAfterEach,
  type Effect,
  inventoryConnector,
  LIMITS,
  readsProgram,
  readsThenReserveProgram,
  track,
} from "./storage-fixtures.ts";

closeRuntimesAfterEach();

const REDIS_URL = "redis://127.0.0.1:6379";

/** A PING over a plain socket; true when Redis answers. */
function redisAnswers(): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port: 6379 });
    const finish = (answer: boolean) => {
      socket.destroy();
      resolve(answer);
    };
    socket.setTimeout(2_000, () => finish(false));
    socket.once("error", () => finish(false));
    socket.once("connect", () => socket.write("PING\r\n"));
    socket.once("data", (data) => finish(data.toString().startsWith("+PONG")));
  });
}

/** Wraps a KeyvRedis adapter, counting calls and bytes written; everything else goes to the adapter. */
function countingRedisAdapter(adapter: KeyvRedis<string>) {
  const counts = { get: 0, getMany: 0, set: 0, setMany: 0, bytesWritten: 0, getManyKeys: [] as string[][] };
  const proxy = new Proxy(adapter, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        if (property === "get") counts.get += 1;
        if (property === "getMany") {
          counts.getMany += 1;
          counts.getManyKeys.push([...(args[0] as string[])]);
        }
        if (property === "set") {
          counts.set += 1;
          counts.bytesWritten += String(args[1]).length;
        }
        if (property === "setMany") {
          counts.setMany += 1;
          for (const entry of args[0] as Array<{ value: unknown }>) counts.bytesWritten += String(entry.value).length;
        }
        return (value as (...inner: unknown[]) => unknown).apply(target, args);
      };
    },
    set(target, property, value) {
      return Reflect.set(target, property, value, target);
    },
  });
  return { adapter: proxy, counts };
}

describe("storage over a real Redis at 127.0.0.1:6379", () => {
  let available = false;
  const namespaces: string[] = [];
  const opened: Keyv[] = [];

  beforeAll(async () => {
    available = await redisAnswers();
    if (!available && process.env.CI)
      throw new Error(`Redis is not reachable at ${REDIS_URL}; CI must provide it for these tests`);
  });

  afterAll(async () => {
    if (!available) return;
    // Remove every key the tests wrote (of any type), then close the connections.
    const cleaner = new KeyvRedis<string>(REDIS_URL);
    const client = await cleaner.getClient();
    for (const namespace of namespaces) {
      const keys = await client.keys(`${namespace}::*`);
      if (keys.length > 0) await client.del(keys);
    }
    await cleaner.disconnect();
    for (const keyv of opened) await keyv.disconnect().catch(() => undefined);
  });

  function redisKeyv(namespace: string) {
    const { adapter, counts } = countingRedisAdapter(new KeyvRedis<string>(REDIS_URL));
    const keyv = new Keyv({ store: adapter, namespace, useKeyPrefix: false });
    opened.push(keyv);
    return { keyv, counts };
  }

  function newNamespace(): string {
    const namespace = `codemode-test-${randomUUID()}`;
    namespaces.push(namespace);
    return namespace;
  }

  function skipWithoutRedis(): boolean {
    if (available) return false;
    console.warn("skipped: Redis not reachable");
    return true;
  }

  it("pauses on one connection; after it closes, a new runtime on a new connection approves with one batched log read", async () => {
    if (skipWithoutRedis()) return;
    const namespace = newNamespace();
    const effects: Effect[] = [];
    const firstStore = redisKeyv(namespace);
    const first = createCodemodeRuntime({
      connectors: [inventoryConnector(effects)],
      storage: firstStore.keyv,
      limits: LIMITS,
    });
    const paused = await first.execute({ code: readsThenReserveProgram(40) });
    expectStatus(paused, "paused");
    await first.close();
    await firstStore.keyv.disconnect();

    const secondStore = redisKeyv(namespace);
    const second = track(
      createCodemodeRuntime({ connectors: [inventoryConnector(effects)], storage: secondStore.keyv, limits: LIMITS }),
    );
    expect((await second.pending()).items.map((action) => action.seq)).toEqual([40]);
    const countsBefore = { get: secondStore.counts.get, getMany: secondStore.counts.getMany };
    const done = await second.approve({ executionId: paused.executionId });
    expectStatus(done, "completed");
    expect(done.result).toEqual({ total: 40, reservation: "r-item-0" });
    expect(effects.filter((effect) => effect.method === "reserve")).toHaveLength(1);
    expect(effects.filter((effect) => effect.method === "read")).toHaveLength(40);

    const entryKey = `:e:${paused.executionId}:`;
    const logLoads = secondStore.counts.getManyKeys
      .slice(countsBefore.getMany)
      .filter((keys) => keys.some((key) => key.includes(entryKey)));
    expect(logLoads).toHaveLength(1);
    console.log(
      `Redis approve of 40 replayed calls: ${secondStore.counts.get - countsBefore.get} get, ${secondStore.counts.getMany - countsBefore.getMany} getMany`,
    );

    // The keys live under the test's namespace, prefixed once.
    const raw = new KeyvRedis<string>(REDIS_URL);
    const client = await raw.getClient();
    const keys = await client.keys(`${namespace}::cm:default:h:*`);
    expect(keys).toEqual([`${namespace}::cm:default:h:${paused.executionId}`]);
    expect(await client.keys(`${namespace}::${namespace}*`)).toEqual([]);
    await raw.disconnect();
  });

  it("bytes written per call stay flat from 10 to 1,000 calls over Redis", async () => {
    if (skipWithoutRedis()) return;
    const perCall = async (calls: number) => {
      const { keyv, counts } = redisKeyv(newNamespace());
      const effects: Effect[] = [];
      const runtime = track(
        createCodemodeRuntime({ connectors: [inventoryConnector(effects)], storage: keyv, limits: LIMITS }),
      );
      const outcome = await runtime.execute({ code: readsProgram(calls) });
      expectStatus(outcome, "completed");
      expect(outcome.result).toBe(calls);
      const state = await runtime.execution(outcome.executionId);
      expect(state?.log).toHaveLength(calls);
      return counts.bytesWritten / calls;
    };
    const perCallAt10 = await perCall(10);
    const perCallAt1000 = await perCall(1000);
    const ratio = perCallAt1000 / perCallAt10;
    console.log(
      `R-ST-1 over Redis, bytes written per call: ${perCallAt10.toFixed(1)} at 10 calls, ${perCallAt1000.toFixed(1)} at 1,000 calls (ratio ${ratio.toFixed(3)})`,
    );
    expect(ratio).toBeLessThanOrEqual(1.1);
  });

  it("an error reply from Redis while reading an execution is STORAGE_ERROR, not NOT_FOUND", async () => {
    if (skipWithoutRedis()) return;
    const namespace = newNamespace();
    const effects: Effect[] = [];
    // KeyvRedis keeps its own throwOnErrors off by default: an error reply would read as a missing key.
    const { keyv } = redisKeyv(namespace);
    const runtime = track(
      createCodemodeRuntime({ connectors: [inventoryConnector(effects)], storage: keyv, limits: LIMITS }),
    );
    const paused = await runtime.execute({ code: readsThenReserveProgram(1) });
    expectStatus(paused, "paused");

    // Replace the execution's head with a list: GET answers WRONGTYPE, a real Redis error reply.
    const raw = new KeyvRedis<string>(REDIS_URL);
    const client = await raw.getClient();
    const headKey = `${namespace}::cm:default:h:${paused.executionId}`;
    const head = await client.get(headKey);
    expect(head).not.toBeNull();
    await client.del(headKey);
    await client.lPush(headKey, "not a string");
    try {
      const outcome = await runtime.approve({ executionId: paused.executionId });
      expectStatus(outcome, "error");
      expect(outcome.code).toBe("STORAGE_ERROR");
    } finally {
      await client.del(headKey);
      await client.set(headKey, head!);
      await raw.disconnect();
    }
    const done = await runtime.approve({ executionId: paused.executionId });
    expectStatus(done, "completed");
    expect(effects.map((effect) => effect.method)).toEqual(["read", "reserve"]);
  });
});
