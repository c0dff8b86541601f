import { createRequire } from "node:module";
import {
  type BackendFactory,
  createNodeRedisClient,
  type IQueueBackend,
  isPgPool,
  type PostgresConnectionOptions,
} from "bullmq";
import { createPostgresBackendWithReliableEvents } from "./postgres-events.js";

/**
 * Where the fleet's jobs live. Every queue, worker and events listener of one fleet points at the
 * same place with the same queue `name`.
 *
 * - `{ redis }`: a Redis URL, or a node-redis client (`createClient()` of `@redis/client` or
 *   `redis`, v5) — the same client `@codemode/storage/redis` uses can be shared. BullMQ talks to
 *   it through its node-redis adapter and duplicates it for its blocking reads. Given a client,
 *   you close it after the queue or worker; given a URL, the queue or worker opens its own client
 *   and closes it.
 * - `{ postgres }`: BullMQ's PostgreSQL backend, for a team that keeps its runs in PostgreSQL
 *   and wants no Redis at all. A connection string or a `pg` pool config (`{ connectionString,
 *   schema, max }`) is migrated on connect (BullMQ's migrations are idempotent and serialised by
 *   an advisory lock); a `pg.Pool` of yours is used as it is: migrate its schema first with
 *   BullMQ's `runMigrations` and set its `search_path` to that schema (default `bullmq`). Its
 *   event reader is replaced by one that does not lose events committed out of id order
 *   (`postgres-events.ts`).
 */
export type CodemodeQueueConnection = { redis: string | NodeRedisClient } | { postgres: PostgresConnectionOptions };

/**
 * A node-redis 5 client: `createClient()` of `@redis/client`, `redis` or `@keyv/redis`, connected
 * or not. Checked loosely here (BullMQ's own `NodeRedisRawClient` type rejects the real client's
 * option types); BullMQ's adapter uses the rest of its API.
 */
export interface NodeRedisClient {
  readonly isOpen: boolean;
  readonly isReady: boolean;
  connect(): Promise<unknown>;
  duplicate(): unknown;
}

/** A connection opened for BullMQ's classes: their options, the backend, and what to close after them. */
export interface OpenedConnection {
  kind: "redis" | "postgres";
  /** Spread into BullMQ's constructor options. */
  options: { connection: never };
  /** BullMQ's backend factory; undefined for its default (Redis). */
  backend: BackendFactory<IQueueBackend, never> | undefined;
  /** Closes what this opened (a node-redis client made from a URL); leaves the caller's alone. */
  close(): Promise<void>;
}

const require = createRequire(import.meta.url);

/** Opens the connection; drivers load only for the backend asked for (both are optional peers). */
export function openConnection(connection: CodemodeQueueConnection): OpenedConnection {
  if ("postgres" in connection) return openPostgres(connection.postgres);
  if ("redis" in connection) return openRedis(connection.redis);
  throw new TypeError("connection must be { redis: url | client } or { postgres: url | config | pool }");
}

function openRedis(urlOrClient: string | NodeRedisClient): OpenedConnection {
  if (typeof urlOrClient !== "string") {
    return {
      kind: "redis",
      options: { connection: createNodeRedisClient(urlOrClient) as never },
      backend: undefined,
      close: async () => undefined,
    };
  }
  const { createClient } = require("@redis/client") as {
    createClient(options: {
      url: string;
      socket: { reconnectStrategy: (retries: number) => number };
    }): NodeRedisClient & { on(event: "error", listener: () => void): unknown; close(): Promise<void> };
  };
  const client = createClient({
    url: urlOrClient,
    // Back to work soon after a restart of Redis: node-redis's own back-off grows to 2 s between
    // tries, the worker idle that long after the server answered again; a refused connect is cheap.
    socket: { reconnectStrategy: (retries) => Math.min(25 * 2 ** retries, 250) + Math.floor(Math.random() * 50) },
  });
  // node-redis throws connection errors out of the event loop unless someone listens; BullMQ
  // reports them on its own classes' "error" events.
  client.on("error", () => undefined);
  let closed: Promise<void> | undefined;
  return {
    kind: "redis",
    options: { connection: createNodeRedisClient(client) as never },
    backend: undefined,
    close: () => (closed ??= client.isOpen ? client.close().catch(() => undefined) : Promise.resolve()),
  };
}

function openPostgres(connection: PostgresConnectionOptions): OpenedConnection {
  const migrated =
    typeof connection === "string"
      ? { connectionString: connection, migrate: true }
      : isPgPool(connection) || "migrate" in connection || "skipMigrations" in connection
        ? connection
        : { migrate: true, ...connection };
  return {
    kind: "postgres",
    options: { connection: migrated as never },
    backend: createPostgresBackendWithReliableEvents,
    close: async () => undefined,
  };
}
