/**
 * What the recover stories share: the stores they run on (SQLite, PostgreSQL, Redis), the worker
 * processes (`node test/recover-processes/worker.ts`, importing the BUILT packages) they start and
 * kill, and, within a store's describe, the helpers that start a run and recover it.
 */
import { type ChildProcess, fork } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { fileURLToPath } from "node:url";
import { tcpUnreachable } from "@codemode/storage/testing";
import { createClient } from "@keyv/redis";
import pg from "pg";
import { beforeAll } from "vitest";
import type { RecoverWorkerConfig } from "./worker.ts";

const WORKER = fileURLToPath(new URL("./worker.ts", import.meta.url));
const REDIS_URL = process.env.CODEMODE_REDIS_URL ?? "redis://127.0.0.1:6379";
const POSTGRES_URL = process.env.CODEMODE_POSTGRES_URL ?? "postgresql://postgres@127.0.0.1:5432/test";
/** Short, so a killed worker's lease lapses quickly; a live worker renews it every third. */
export const LEASE_MS = 1_000;

export type Summary = {
  executionId: string;
  status: string;
  result?: unknown;
  pending?: Array<{ seq: number; method: string }>;
  code?: string;
  calls?: string[];
};

export interface Spawned {
  child: ChildProcess;
  event(name: string, timeoutMs?: number): Promise<Record<string, unknown>>;
  kill(): Promise<void>;
}

/** Forks a worker with `config`; `event` waits for one of its messages. */
export function spawnWorker(config: RecoverWorkerConfig): Spawned {
  const child = fork(WORKER, [JSON.stringify(config)], {
    execArgv: [],
    stdio: ["ignore", "ignore", "pipe", "ipc"],
    serialization: "json",
  });
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const events: Array<Record<string, unknown>> = [];
  child.on("message", (message: Record<string, unknown>) => events.push(message));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return {
    child,
    async event(name, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = events.find((event) => event.event === name);
        if (found) return found;
        if (child.exitCode !== null || child.signalCode !== null)
          throw new Error(`worker ended before "${name}": ${stderr}`);
        if (Date.now() > deadline) throw new Error(`no "${name}" within ${timeoutMs} ms: ${stderr}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await exited;
    },
  };
}

export interface StoreCase {
  name: RecoverWorkerConfig["store"];
  url: () => string;
  unavailable(): Promise<string | undefined>;
  attempts(table: string, namespace: string): Promise<string[]>;
  cleanup(): Promise<void>;
}

const sqliteDir = mkdtempSync(join(tmpdir(), "codemode-recover-"));
const sqliteFile = join(sqliteDir, "runs.sqlite");
/** The stores the stories run on. */
export const stores: StoreCase[] = [
  {
    name: "sqlite",
    url: () => sqliteFile,
    unavailable: async () => undefined,
    async attempts(table) {
      const database = new DatabaseSync(sqliteFile);
      const rows = database.prepare(`SELECT key, worker FROM "${table}" ORDER BY rowid`).all() as Array<{
        key: string;
        worker: string;
      }>;
      database.close();
      return rows.map((row) => `${row.key} ${row.worker}`);
    },
    async cleanup() {
      rmSync(sqliteDir, { recursive: true, force: true });
    },
  },
  {
    name: "postgres",
    url: () => POSTGRES_URL,
    unavailable: () => tcpUnreachable(POSTGRES_URL),
    async attempts(table) {
      const pool = new pg.Pool({ connectionString: POSTGRES_URL, max: 1 });
      const { rows } = await pool.query(`SELECT key, worker FROM "${table}" ORDER BY ctid`);
      await pool.end();
      return (rows as Array<{ key: string; worker: string }>).map((row) => `${row.key} ${row.worker}`);
    },
    async cleanup() {
      const pool = new pg.Pool({ connectionString: POSTGRES_URL, max: 1 });
      const { rows } = await pool.query(`SELECT tablename FROM pg_tables WHERE tablename LIKE 'recover_%'`);
      for (const row of rows as Array<{ tablename: string }>)
        await pool.query(`DROP TABLE IF EXISTS "${row.tablename}"`);
      await pool.end();
    },
  },
  {
    name: "redis",
    url: () => REDIS_URL,
    unavailable: () => tcpUnreachable(REDIS_URL),
    async attempts(table, namespace) {
      const client = createClient({ url: REDIS_URL });
      await client.connect();
      const rows = await client.lRange(`${namespace}:${table}`, 0, -1);
      await client.close();
      return rows;
    },
    async cleanup() {
      const client = createClient({ url: REDIS_URL });
      await client.connect();
      const keys = await client.keys("recover-*");
      if (keys.length > 0) await client.del(keys);
      await client.close();
    },
  },
];

/** Within a store's describe: the check that skips a story without the store, and the helpers that start and recover runs. */
export function useRecoverStore(store: StoreCase) {
  let unavailable: string | undefined;
  beforeAll(async () => {
    unavailable = await store.unavailable();
    if (unavailable && process.env.CI)
      throw new Error(`${store.name} is not reachable (${unavailable}); CI must provide it`);
  });
  const skip = () => {
    if (unavailable) console.warn(`story not run: ${store.name} is not reachable (${unavailable})`);
    return unavailable !== undefined;
  };

  /** One story's store space: a namespace and an attempts table of its own. */
  const space = () => {
    const id = randomUUID().slice(0, 8);
    return { namespace: `recover-${id}`, attempts: `recover_${id}` };
  };
  const base = (
    where: { namespace: string; attempts: string },
    role: RecoverWorkerConfig["role"],
    workerId: string,
  ) => ({
    store: store.name,
    url: store.url(),
    leaseMs: LEASE_MS,
    role,
    workerId,
    ...where,
  });

  /** Starts a run in a worker and waits until it is inside `ledger.charge*`. */
  async function startRun(where: { namespace: string; attempts: string }, role: "run" | "hold", code: string) {
    const worker = spawnWorker({ ...base(where, role, role === "run" ? "killed" : "alive"), code });
    const inside = await worker.event("inside-call");
    return { worker, executionId: String(inside.executionId) };
  }

  /** Asks a fresh process to recover; retries until the killed host's lease has lapsed. */
  async function recoverUntilFound(
    where: { namespace: string; attempts: string },
    executionId?: string,
    reportCalls = false,
  ): Promise<Summary[]> {
    for (let attempt = 0; attempt < 30; attempt++) {
      const outcomes = await recoverOnce(where, executionId, reportCalls);
      if (outcomes.length > 0) return outcomes;
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
    throw new Error("nothing was recovered within the time the lease takes to lapse");
  }
  async function recoverOnce(
    where: { namespace: string; attempts: string },
    executionId?: string,
    reportCalls = false,
  ): Promise<Summary[]> {
    const worker = spawnWorker({
      ...base(where, "recover", "recoverer"),
      ...(executionId ? { executionId } : {}),
      ...(reportCalls ? { reportCalls } : {}),
    });
    const reply = await worker.event("recovered");
    await worker.kill();
    return reply.outcomes as Summary[];
  }
  return { store, skip, space, base, startRun, recoverUntilFound, recoverOnce };
}
