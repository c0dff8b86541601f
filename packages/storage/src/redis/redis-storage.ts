import type { KeyvLike } from "@codemode/core/store";
import KeyvRedis, { createClient, type RedisConnectionClientType } from "@keyv/redis";
import Keyv from "keyv";
import { storedRows } from "../lock/stored-rows.js";
import { type CodemodeStorage, checkNamespace, type StorageOptions } from "../storage.js";
import { createRedisExecutionIndex } from "./redis-execution-index.js";
import { createRedisLock, type RedisLockClient } from "./redis-lock.js";

export interface RedisStorageOptions extends StorageOptions {
  /**
   * How long a command waits for the first connection to Redis before failing. Once connected,
   * a command issued while the connection is down fails at once. Default 5 000 ms.
   */
  connectTimeoutMs?: number;
  /**
   * Called with errors the Redis client reports between commands (a dropped connection, a
   * failed reconnect). Commands that fail still reject, and the runtime reports STORAGE_ERROR.
   * Default: ignored, since the failing command already says what went wrong.
   */
  onError?: (error: unknown) => void;
}

/** A node-redis client connection that this storage may use (`createClient()` of `redis` or `@redis/client`). */
export type RedisClient = RedisConnectionClientType;

/**
 * A store on one Redis server: executions and logs through `@keyv/redis`, leases with
 * `SET NX PX` and token-checked Lua (R-ST-4), the listing of executions in sorted sets (one
 * round trip per status change). Every worker that points at the same server and
 * namespace can resume, approve, reject or expire any execution.
 *
 * Given a URL, the storage opens its own client with the offline queue off: a command issued
 * while the connection is down fails at once (STORAGE_ERROR) instead of waiting for a reconnect
 * that may never come, and the client keeps reconnecting in the background. Given a client, it
 * uses that one and leaves it open on `close()`; create it with `disableOfflineQueue: true` for
 * the same fail-fast behaviour.
 *
 * @example
 * import { redisStorage } from "@codemode/storage/redis";
 * const storage = redisStorage(process.env.REDIS_URL ?? "redis://127.0.0.1:6379");
 * const runtime = createCodemodeRuntime({ connectors: [github], storage });
 */
export function redisStorage(urlOrClient: string | RedisClient, options: RedisStorageOptions = {}): CodemodeStorage {
  const namespace = checkNamespace(options.namespace);
  const connectTimeoutMs = options.connectTimeoutMs ?? 5_000;
  const ownsClient = typeof urlOrClient === "string";
  const client: RedisClient =
    typeof urlOrClient === "string"
      ? (createClient({
          url: urlOrClient,
          disableOfflineQueue: true,
          socket: {
            connectTimeout: connectTimeoutMs,
            // Back to work soon after a restart: a refused connect is cheap, so the client tries at
            // least every 250 ms (node-redis's own back-off grows to 2 s, the store idle that long).
            reconnectStrategy: (retries: number) => Math.min(25 * 2 ** retries, 250) + Math.floor(Math.random() * 50),
          },
        }) as RedisClient)
      : urlOrClient;
  // A node-redis client with no "error" listener throws its connection errors out of the event loop.
  client.on("error", (error: unknown) => options.onError?.(error));

  let closed = false;
  let everReady = client.isReady;
  const firstReady = new Promise<void>((resolve) => {
    if (client.isReady) resolve();
    else client.once("ready", resolve);
  }).then(() => {
    everReady = true;
  });
  // Connecting keeps retrying until Redis answers; commands wait for it only up to connectTimeoutMs.
  if (!client.isOpen) client.connect().catch(() => undefined);
  const ready = async (): Promise<void> => {
    if (closed) throw new Error("the Redis storage is closed");
    if (everReady) return;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`could not connect to Redis within ${connectTimeoutMs} ms`)),
        connectTimeoutMs,
      );
    });
    await Promise.race([firstReady, timeout]).finally(() => clearTimeout(timer));
  };

  const adapter = new GatedKeyvRedis(client, ready);
  adapter.namespace = namespace;
  // KeyvRedis answers "missing" for a failed read unless told to throw; a log must never do that.
  adapter.throwOnErrors = true;
  // The adapter prefixes keys itself ("<namespace>::key"); a Keyv prefix on top would double it.
  const keyv = new Keyv({ store: adapter, namespace, useKeyPrefix: false, throwOnErrors: true });
  keyv.on("error", () => {
    // Failures reject the call that met them (throwOnErrors); this listener only keeps Keyv quiet.
  });

  // Every command goes through the gate: a closed storage refuses, a first connection is waited for.
  const commands = client as unknown as RedisLockClient;
  const gated: RedisLockClient = {
    set: async (key, value, setOptions) => {
      await ready();
      return commands.set(key, value, setOptions);
    },
    eval: async (script, evalOptions) => {
      await ready();
      return commands.eval(script, evalOptions);
    },
    exists: async (key) => {
      await ready();
      return commands.exists(key);
    },
  };
  const keyPrefix = `${namespace}${adapter.keyPrefixSeparator}`;

  return {
    keyv: keyv as Keyv & KeyvLike,
    // Leases write the runtime's records themselves, fenced, exactly as the adapter would store them.
    lock: createRedisLock(gated, {
      keyPrefix,
      rows: storedRows(keyv, (key) => adapter.createKeyPrefix(key, namespace)),
    }),
    index: createRedisExecutionIndex(gated, { keyPrefix }),
    async close() {
      if (closed) return;
      closed = true;
      if (!ownsClient || !client.isOpen) return;
      if (client.isReady) await client.close();
      else client.destroy();
    },
  };
}

/**
 * KeyvRedis connects on a command's behalf and waits for it without limit, and reconnects a
 * closed client; this one waits through the storage's gate instead, and a closed storage stays closed.
 */
class GatedKeyvRedis extends KeyvRedis<string> {
  constructor(
    client: RedisClient,
    private readonly ready: () => Promise<void>,
  ) {
    super(client);
  }

  override async getClient() {
    await this.ready();
    return this.client as Awaited<ReturnType<KeyvRedis<string>["getClient"]>>;
  }
}
