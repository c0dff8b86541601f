/**
 * The stores the storage process tests share among their workers (a Redis, a PostgreSQL database,
 * a SQLite file): how a worker points at one, and how the parent reads the effects and the raw
 * stored keys on it.
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { tcpUnreachable } from "@codemode/storage/testing";
import { createClient } from "@keyv/redis";
import pg from "pg";
import type { WorkerConfig } from "./worker.ts";

const REDIS_URL = process.env.CODEMODE_REDIS_URL ?? "redis://127.0.0.1:6379";
const POSTGRES_URL = process.env.CODEMODE_POSTGRES_URL ?? "postgresql://postgres@127.0.0.1:5432/test";
/** Lease of the workers that race: the runtime's default is 30 s; long enough for a loaded machine. */
const LEASE_MS = 30_000;

/** One shared store the workers point at, and how the parent reads the effects on it. */
export interface Backend {
  label: string;
  /** How many racing approve pairs this store gets. */
  racingPairs: number;
  unavailable(): Promise<string | undefined>;
  setUp(): Promise<void>;
  config(workerId: string, leaseMs?: number): WorkerConfig;
  /** Applied actions counted on the store: idempotencyKey → times applied. */
  effects(): Promise<Map<string, number>>;
  /** Every stored key of an execution (head, code, log entries, result) with its raw value, as the store holds it. */
  raw(executionId: string): Promise<Record<string, string>>;
  tearDown(): Promise<void>;
}

export function redisBackend(): Backend {
  const namespace = `codemode-processes-${randomUUID().slice(0, 8)}`;
  const withClient = async <T>(work: (client: ReturnType<typeof createClient>) => Promise<T>): Promise<T> => {
    const client: ReturnType<typeof createClient> = createClient({ url: REDIS_URL }) as ReturnType<typeof createClient>;
    await client.connect();
    try {
      return await work(client);
    } finally {
      await client.close();
    }
  };
  return {
    label: "Redis",
    racingPairs: 200,
    unavailable: () => tcpUnreachable(REDIS_URL),
    async setUp() {},
    config: (workerId, leaseMs = LEASE_MS) => ({ store: "redis", url: REDIS_URL, namespace, workerId, leaseMs }),
    effects: () =>
      withClient(
        async (client) =>
          new Map(
            Object.entries(await client.hGetAll(`${namespace}:effects`)).map(([key, count]) => [key, Number(count)]),
          ),
      ),
    raw: (executionId) =>
      withClient(async (client) => {
        const keys = (await client.keys(`${namespace}::*${executionId}*`)).sort();
        const values = keys.length > 0 ? await client.mGet(keys) : [];
        return Object.fromEntries(keys.map((key, index) => [key, String(values[index])]));
      }),
    tearDown: () =>
      withClient(async (client) => {
        const keys = [...(await client.keys(`${namespace}::*`)), `${namespace}:effects`];
        await client.del(keys);
      }),
  };
}

export function postgresBackend(): Backend {
  const suffix = randomUUID().slice(0, 8);
  const tables = {
    table: `codemode_processes_store_${suffix}`,
    leaseTable: `codemode_processes_leases_${suffix}`,
    effects: `codemode_processes_effects_${suffix}`,
  };
  const withPool = async <T>(work: (pool: pg.Pool) => Promise<T>): Promise<T> => {
    const pool = new pg.Pool({ connectionString: POSTGRES_URL, max: 1 });
    try {
      return await work(pool);
    } finally {
      await pool.end();
    }
  };
  return {
    label: "PostgreSQL",
    racingPairs: 200,
    unavailable: () => tcpUnreachable(POSTGRES_URL),
    setUp: () =>
      withPool(
        async (pool) =>
          void (await pool.query(`CREATE TABLE "${tables.effects}" (key TEXT NOT NULL, worker TEXT NOT NULL)`)),
      ),
    config: (workerId, leaseMs = LEASE_MS) => ({
      store: "postgres",
      url: POSTGRES_URL,
      namespace: "codemode",
      tables,
      workerId,
      leaseMs,
    }),
    effects: () =>
      withPool(async (pool) => {
        const rows = (await pool.query(`SELECT key, count(*)::int AS count FROM "${tables.effects}" GROUP BY key`))
          .rows as Array<{ key: string; count: number }>;
        return new Map(rows.map((row) => [row.key, row.count]));
      }),
    raw: (executionId) =>
      withPool(async (pool) => {
        const rows = (
          await pool.query(`SELECT key, value FROM "${tables.table}" WHERE position($1 in key) > 0 ORDER BY key`, [
            executionId,
          ])
        ).rows as Array<{ key: string; value: string }>;
        return Object.fromEntries(rows.map((row) => [row.key, row.value]));
      }),
    tearDown: () =>
      withPool(
        async (pool) =>
          void (await pool.query(
            `DROP TABLE IF EXISTS "${tables.table}", "${tables.leaseTable}", "${tables.effects}"`,
          )),
      ),
  };
}

export function sqliteBackend(): Backend {
  const folder = mkdtempSync(join(tmpdir(), "codemode-processes-"));
  const file = join(folder, "shared.sqlite");
  return {
    label: "SQLite",
    racingPairs: 200,
    unavailable: async () => undefined,
    async setUp() {},
    config: (workerId, leaseMs = LEASE_MS) => ({
      store: "sqlite",
      url: file,
      namespace: "codemode",
      workerId,
      leaseMs,
    }),
    async effects() {
      const database = new DatabaseSync(file, { timeout: 5_000 });
      try {
        const rows = database.prepare(`SELECT key, count(*) AS count FROM effects GROUP BY key`).all() as Array<{
          key: string;
          count: number;
        }>;
        return new Map(rows.map((row) => [row.key, Number(row.count)]));
      } finally {
        database.close();
      }
    },
    async raw(executionId) {
      const database = new DatabaseSync(file, { timeout: 5_000 });
      try {
        const rows = database
          .prepare(`SELECT key, value FROM keyv WHERE instr(key, ?) > 0 ORDER BY key`)
          .all(executionId) as Array<{ key: string; value: string }>;
        return Object.fromEntries(rows.map((row) => [row.key, row.value]));
      } finally {
        database.close();
      }
    },
    async tearDown() {
      rmSync(folder, { recursive: true, force: true });
    },
  };
}

/** Each store's backend, made fresh for one test file. */
export const BACKENDS = { redis: redisBackend, postgres: postgresBackend, sqlite: sqliteBackend };
