/**
 * One schema, whatever the connection says (R-ST-7). `@keyv/postgres` names its schema in every
 * statement; the storage's own statements (fenced writes, leases, the listing) used to follow the
 * connection's `search_path`, so a fleet in a schema of its own read from one schema and wrote to
 * another and lost every run. The conformance suite runs here with a schema of its own, with a
 * `search_path` that points elsewhere, and as a role that owns a schema of its own name (which
 * PostgreSQL's default `"$user", public` finds first), and every table is where the option says.
 */
import { randomUUID } from "node:crypto";
import { createCodemodeRuntime, defineConnector } from "@codemode/core";
import { postgresStorage } from "@codemode/storage/postgres";
import { runStorageConformance, tcpUnreachable } from "@codemode/storage/testing";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectStatus, suiteHooks } from "../testing/story-helpers.js";

const POSTGRES_URL = process.env.CODEMODE_POSTGRES_URL ?? "postgresql://postgres@127.0.0.1:5432/test";
const suffix = randomUUID().slice(0, 8);
/** A schema of the storage's own, and another one the connection's search_path points at. */
const OWN = `codemode_own_${suffix}`;
const ELSEWHERE = `codemode_elsewhere_${suffix}`;
/** A role that owns a schema of its own name. */
const ROLE = `codemode_role_${suffix}`;
const TABLES = { table: "cm_store", leaseTable: "cm_leases", indexTable: "cm_executions" };
const roleUrl = () => {
  const url = new URL(POSTGRES_URL);
  url.username = ROLE;
  url.password = "";
  return url.toString();
};

async function admin<T>(work: (pool: pg.Pool) => Promise<T>): Promise<T> {
  const pool = new pg.Pool({ connectionString: POSTGRES_URL, max: 1 });
  try {
    return await work(pool);
  } finally {
    await pool.end();
  }
}

beforeAll(async () => {
  if (await tcpUnreachable(POSTGRES_URL)) return;
  await admin(async (pool) => {
    await pool.query(`CREATE SCHEMA "${ELSEWHERE}"`);
    await pool.query(`CREATE ROLE "${ROLE}" LOGIN`);
    await pool.query(`CREATE SCHEMA "${ROLE}" AUTHORIZATION "${ROLE}"`);
    // The role may use public too, as many do: its own schema still comes first in its search_path.
    await pool.query(`GRANT USAGE, CREATE ON SCHEMA public TO "${ROLE}"`);
  });
});

afterAll(async () => {
  if (await tcpUnreachable(POSTGRES_URL)) return;
  await admin(async (pool) => {
    for (const schema of [OWN, ELSEWHERE, ROLE]) await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    for (const table of Object.values(TABLES)) await pool.query(`DROP TABLE IF EXISTS public."${table}_${suffix}"`);
    await pool.query(`DROP OWNED BY "${ROLE}"`);
    await pool.query(`DROP ROLE IF EXISTS "${ROLE}"`);
  });
});

/** The tables as the suite names them: a suffix keeps runs in public apart from other files' tables. */
const inPublic = {
  table: `${TABLES.table}_${suffix}`,
  leaseTable: `${TABLES.leaseTable}_${suffix}`,
  indexTable: `${TABLES.indexTable}_${suffix}`,
};
const unavailable = () => tcpUnreachable(POSTGRES_URL);
const dropLease = (url: string, schema: string, table: string) => async (_storage: unknown, key: string) => {
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  try {
    const removed = await pool.query(`DELETE FROM "${schema}"."${table}" WHERE key = $1`, [`codemode:${key}`]);
    expect(removed.rowCount).toBe(1);
  } finally {
    await pool.end();
  }
};

runStorageConformance(
  "R-ST-7 postgresStorage in a schema of its own",
  () => postgresStorage(POSTGRES_URL, { ...TABLES, schema: OWN }),
  { unavailable, fenced: true, dropLease: dropLease(POSTGRES_URL, OWN, TABLES.leaseTable) },
);
runStorageConformance(
  "R-ST-7 postgresStorage whose connections' search_path points at another schema",
  () =>
    postgresStorage(POSTGRES_URL, {
      ...TABLES,
      schema: OWN,
      pool: { options: `-c search_path=${ELSEWHERE}` },
    }),
  { unavailable, fenced: true, dropLease: dropLease(POSTGRES_URL, OWN, TABLES.leaseTable) },
);
runStorageConformance(
  "R-ST-7 postgresStorage as a role that owns a schema of its own name (default schema: public)",
  () => postgresStorage(roleUrl(), inPublic),
  { unavailable, fenced: true, dropLease: dropLease(POSTGRES_URL, "public", inPublic.leaseTable) },
);
runStorageConformance(
  "R-ST-7 postgresStorage as a role in the schema of its own name",
  () => postgresStorage(roleUrl(), { ...TABLES, schema: ROLE }),
  { unavailable, fenced: true, dropLease: dropLease(POSTGRES_URL, ROLE, TABLES.leaseTable) },
);

describe("R-ST-7 the schema a PostgreSQL storage uses", () => {
  const cannotRun = suiteHooks(`PostgreSQL at ${POSTGRES_URL}`, unavailable);

  it("R-ST-7 every table is in the schema given, none where the search_path points, and a paused run resumes from a second storage", async () => {
    if (cannotRun()) return;
    const options = { ...TABLES, schema: OWN, pool: { options: `-c search_path=${ELSEWHERE}` } };
    const first = postgresStorage(POSTGRES_URL, options);
    const gate = defineConnector({
      name: "gate",
      tools: { open: { requiresApproval: true, execute: () => "opened" } },
    });
    const name = `schema-${suffix}`;
    const paused = await createCodemodeRuntime({ name, connectors: [gate], storage: first }).execute({
      code: "async () => gate.open({})",
    });
    expectStatus(paused, "paused");
    await first.close();
    const second = postgresStorage(POSTGRES_URL, options);
    const runtime = createCodemodeRuntime({ name, connectors: [gate], storage: second });
    expect((await runtime.pending()).items.map((action) => action.executionId)).toContain(paused.executionId);
    expectStatus(await runtime.approve({ executionId: paused.executionId }), "completed");
    await runtime.close();
    await second.close();
    const where = await admin((pool) =>
      pool.query("SELECT table_schema, table_name FROM information_schema.tables WHERE table_schema = ANY($1)", [
        [OWN, ELSEWHERE],
      ]),
    );
    expect(where.rows.map((row: { table_schema: string }) => row.table_schema).sort()).toEqual([OWN, OWN, OWN]);
  });

  it("R-ST-7 a schema or table name PostgreSQL would fold or that is not plain is refused at creation", () => {
    for (const schema of ["Mixed", "a-b", "x;drop", ""])
      expect(() => postgresStorage(POSTGRES_URL, { schema })).toThrow(/plain lower-case SQL identifier/);
    expect(() => postgresStorage(POSTGRES_URL, { table: "Store" })).toThrow(/plain lower-case SQL identifier/);
  });
});
