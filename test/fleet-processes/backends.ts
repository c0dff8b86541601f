/**
 * The stores of the fleet stories (test/fleet*.test.ts): how each prepares the ledger's tables,
 * reads back what the ledger recorded, and cleans up.
 */
import { createClient } from "@keyv/redis";
import pg from "pg";
import { type FleetConfig, tables } from "./shared.ts";

export const REDIS_URL = process.env.CODEMODE_REDIS_URL ?? "redis://127.0.0.1:6379";
export const POSTGRES_URL = process.env.CODEMODE_POSTGRES_URL ?? "postgresql://postgres@127.0.0.1:5432/test";

/** What the ledger recorded, read back from the real store. */
export interface Recorded {
  attempts: Array<{ key: string; worker: string; gated: boolean; at: number }>;
  effects: Map<string, { worker: string; at: number }>;
  approvals: Map<string, number>;
}

export interface BackendCase {
  name: FleetConfig["backend"];
  url: string;
  /** How the runs' storage is set up, when not as the store's defaults (PostgreSQL schemas, R-ST-7). */
  runs?: FleetConfig["runs"];
  prepare(space: string): Promise<void>;
  read(space: string): Promise<Recorded>;
  cleanup(space: string): Promise<void>;
}

export const backends: BackendCase[] = [
  {
    name: "redis",
    url: REDIS_URL,
    prepare: async () => undefined,
    async read(space) {
      const client = createClient({ url: REDIS_URL });
      await client.connect();
      const key = (name: string) => `${space}:ledger:${name}`;
      const attempts = (await client.lRange(key("attempts"), 0, -1)).map(
        (row) => JSON.parse(row) as Recorded["attempts"][number],
      );
      const effects = new Map(
        Object.entries(await client.hGetAll(key("effects"))).map(([id, row]) => [
          id,
          JSON.parse(row) as { worker: string; at: number },
        ]),
      );
      const approvals = new Map(
        Object.entries(await client.hGetAll(key("approvals"))).map(([id, at]) => [id, Number(at)]),
      );
      await client.close();
      return { attempts, effects, approvals };
    },
    async cleanup(space) {
      const client = createClient({ url: REDIS_URL });
      await client.connect();
      const keys = await client.keys(`${space}*`);
      if (keys.length > 0) await client.del(keys);
      await client.close();
    },
  },
  {
    name: "postgres",
    url: POSTGRES_URL,
    async prepare(space) {
      const names = tables(space);
      const pool = new pg.Pool({ connectionString: POSTGRES_URL, max: 1 });
      await pool.query(
        `CREATE TABLE "${names.attempts}" (key TEXT NOT NULL, worker TEXT NOT NULL, gated BOOLEAN NOT NULL, at BIGINT NOT NULL)`,
      );
      await pool.query(
        `CREATE TABLE "${names.effects}" (key TEXT PRIMARY KEY, worker TEXT NOT NULL, at BIGINT NOT NULL)`,
      );
      await pool.query(`CREATE TABLE "${names.approvals}" (key TEXT PRIMARY KEY, at BIGINT NOT NULL)`);
      await pool.end();
    },
    async read(space) {
      const names = tables(space);
      const pool = new pg.Pool({ connectionString: POSTGRES_URL, max: 1 });
      const attempts = (await pool.query(`SELECT key, worker, gated, at FROM "${names.attempts}"`)).rows.map((row) => ({
        ...row,
        at: Number(row.at),
      })) as Recorded["attempts"];
      const effects = new Map(
        (await pool.query(`SELECT key, worker, at FROM "${names.effects}"`)).rows.map((row) => [
          row.key as string,
          { worker: row.worker as string, at: Number(row.at) },
        ]),
      );
      const approvals = new Map(
        (await pool.query(`SELECT key, at FROM "${names.approvals}"`)).rows.map((row) => [
          row.key as string,
          Number(row.at),
        ]),
      );
      await pool.end();
      return { attempts, effects, approvals };
    },
    async cleanup(space) {
      const pool = new pg.Pool({ connectionString: POSTGRES_URL, max: 1 });
      for (const name of Object.values(tables(space))) await pool.query(`DROP TABLE IF EXISTS "${name}"`);
      await pool.end();
    },
  },
];
