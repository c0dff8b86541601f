/**
 * What the processes of test/fleet.test.ts share: their configuration, the store they keep runs
 * in, and the `ledger` connector whose calls record every attempt and apply each effect once per
 * idempotency key, on the real store (Redis lists and hashes, or PostgreSQL tables), so the test
 * can count them after workers were killed mid-call (or in a folder, `ledgerDir`, when the story
 * stops the store). They import the BUILT packages.
 */

import type { CodemodeQueueConnection } from "@codemode/bullmq";
import { type CodemodeRuntime, createCodemodeRuntime, defineConnector } from "@codemode/core";
import type { CodemodeStorage } from "@codemode/storage";
import { postgresStorage } from "@codemode/storage/postgres";
import { redisStorage } from "@codemode/storage/redis";
import { createClient } from "@keyv/redis";
import pg from "pg";
import { openFileLedger } from "./file-ledger.ts";

export interface FleetConfig {
  backend: "redis" | "postgres";
  url: string;
  /** Store namespace, BullMQ queue name, and prefix of the PostgreSQL tables. */
  space: string;
  leaseMs: number;
  lockDurationMs: number;
  stalledIntervalMs: number;
  concurrency: number;
  /** Each call waits a random time in this range (ms), so kills land inside calls. */
  callMs: [number, number];
  workerId: string;
  /** The runtime's limits per pass, when the story sets them (the default otherwise). */
  limits?: { timeoutMs?: number; memoryMb?: number };
  /**
   * A folder for the ledger instead of the store (file-ledger.ts), for stories that stop the store:
   * the ledger must stay the truth while it is down.
   */
  ledgerDir?: string;
  /**
   * PostgreSQL only, how the runs' storage is set up (R-ST-7): its own URL (another role), its
   * `schema`, and a `search_path` its connections are opened with.
   */
  runs?: { url?: string; schema?: string; searchPath?: string };
}

export function readConfig(): FleetConfig {
  return JSON.parse(process.argv[2] ?? "{}") as FleetConfig;
}

/** Table names of a space (PostgreSQL). */
export function tables(space: string) {
  const base = space.replaceAll("-", "_");
  return {
    kv: `${base}_kv`,
    leases: `${base}_leases`,
    index: `${base}_ix`,
    attempts: `${base}_attempts`,
    effects: `${base}_effects`,
    approvals: `${base}_approvals`,
  };
}

/** `onError`: errors the store's client reports between commands (a dropped connection). */
export function openStorage(
  config: FleetConfig,
  options: { onError?: (error: unknown) => void } = {},
): CodemodeStorage {
  if (config.backend === "redis") return redisStorage(config.url, { namespace: config.space, ...options });
  const names = tables(config.space);
  const runs = config.runs ?? {};
  return postgresStorage(runs.url ?? config.url, {
    namespace: config.space,
    table: names.kv,
    leaseTable: names.leases,
    indexTable: names.index,
    ...(runs.schema ? { schema: runs.schema } : {}),
    pool: { max: 4, ...(runs.searchPath ? { options: `-c search_path=${runs.searchPath}` } : {}) },
    ...options,
  });
}

export function queueConnection(config: FleetConfig): CodemodeQueueConnection {
  return config.backend === "redis" ? { redis: config.url } : { postgres: { connectionString: config.url, max: 4 } };
}

/** The ledger of attempts, effects and approvals on the real store. */
export interface Ledger {
  attempt(key: string, worker: string, gated: boolean): Promise<void>;
  /** Applies the effect unless one with that key was applied; true when this call applied it. */
  effect(key: string, worker: string): Promise<boolean>;
  approval(key: string): Promise<void>;
  close(): Promise<void>;
}

export async function openLedger(config: FleetConfig): Promise<Ledger> {
  if (config.ledgerDir) return openFileLedger(config.ledgerDir, config.workerId);
  if (config.backend === "redis") {
    const client = createClient({ url: config.url });
    client.on("error", () => undefined);
    await client.connect();
    const key = (name: string) => `${config.space}:ledger:${name}`;
    return {
      attempt: async (id, worker, gated) =>
        void (await client.rPush(key("attempts"), JSON.stringify({ key: id, worker, gated, at: Date.now() }))),
      effect: async (id, worker) =>
        (await client.hSetNX(key("effects"), id, JSON.stringify({ worker, at: Date.now() }))) === 1,
      approval: async (id) => void (await client.hSetNX(key("approvals"), id, String(Date.now()))),
      close: () => client.close(),
    };
  }
  const names = tables(config.space);
  const pool = new pg.Pool({ connectionString: config.url, max: 2 });
  return {
    attempt: async (id, worker, gated) =>
      void (await pool.query(`INSERT INTO "${names.attempts}" (key, worker, gated, at) VALUES ($1, $2, $3, $4)`, [
        id,
        worker,
        gated,
        Date.now(),
      ])),
    effect: async (id, worker) =>
      (
        await pool.query(
          `INSERT INTO "${names.effects}" (key, worker, at) VALUES ($1, $2, $3) ON CONFLICT (key) DO NOTHING`,
          [id, worker, Date.now()],
        )
      ).rowCount === 1,
    approval: async (id) =>
      void (await pool.query(
        `INSERT INTO "${names.approvals}" (key, at) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING`,
        [id, Date.now()],
      )),
    close: () => pool.end(),
  };
}

/** The runtime every process of the fleet opens: same name, store and connectors. */
export function openRuntime(config: FleetConfig, storage: CodemodeStorage, ledger: Ledger): CodemodeRuntime {
  const call = (gated: boolean) => async (args: { n: number }, context: { idempotencyKey: string }) => {
    await ledger.attempt(context.idempotencyKey, config.workerId, gated);
    const [low, high] = config.callMs;
    await new Promise((resolve) => setTimeout(resolve, low + Math.random() * (high - low)));
    // A real payment API dedupes on the key; so does the ledger.
    const applied = await ledger.effect(context.idempotencyKey, config.workerId);
    return { n: args.n, key: context.idempotencyKey, applied };
  };
  const ledgerConnector = defineConnector({
    name: "ledger",
    tools: {
      step: { execute: call(false) },
      pay: { requiresApproval: true, execute: call(true) },
    },
  });
  return createCodemodeRuntime({
    connectors: [ledgerConnector],
    storage,
    leaseMs: config.leaseMs,
    maxExecutions: 10_000,
    ...(config.limits ? { limits: config.limits } : {}),
    logger: { warn() {} },
  });
}

/** Five calls, the third needing approval. */
export const PROGRAM = `async () => {
  const calls = [];
  calls.push(await ledger.step({ n: 1 }));
  calls.push(await ledger.step({ n: 2 }));
  calls.push(await ledger.pay({ n: 3 }));
  calls.push(await ledger.step({ n: 4 }));
  calls.push(await ledger.step({ n: 5 }));
  return calls.map((call) => call.key);
}`;
