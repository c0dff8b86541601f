import { randomUUID } from "node:crypto";
import { createCodemodeRuntime, defineConnector } from "@codemode/core";
import { postgresStorage } from "@codemode/storage/postgres";
import { runExecutionIndexConformance, runStorageConformance, tcpUnreachable } from "@codemode/storage/testing";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { expectStatus, expectStorageErrors, suiteHooks } from "../testing/story-helpers.js";

const POSTGRES_URL = process.env.CODEMODE_POSTGRES_URL ?? "postgresql://postgres@127.0.0.1:5432/test";
// Tables of their own, dropped afterwards, so the tests leave the database as they found it.
const suffix = randomUUID().slice(0, 8);
const TABLES = {
  table: `codemode_test_store_${suffix}`,
  leaseTable: `codemode_test_leases_${suffix}`,
  indexTable: `codemode_test_executions_${suffix}`,
};

afterAll(async () => {
  if (await tcpUnreachable(POSTGRES_URL)) return;
  const pool = new pg.Pool({ connectionString: POSTGRES_URL });
  await pool.query(`DROP TABLE IF EXISTS "${TABLES.table}", "${TABLES.leaseTable}", "${TABLES.indexTable}"`);
  await pool.end();
});

runStorageConformance("postgresStorage(url)", () => postgresStorage(POSTGRES_URL, TABLES), {
  unavailable: () => tcpUnreachable(POSTGRES_URL),
  fenced: true,
  dropLease: async (_storage, key) => {
    const pool = new pg.Pool({ connectionString: POSTGRES_URL });
    try {
      expect(
        (await pool.query(`DELETE FROM "${TABLES.leaseTable}" WHERE key = $1`, [`codemode:${key}`])).rowCount,
      ).toBe(1);
    } finally {
      await pool.end();
    }
  },
});
runExecutionIndexConformance(
  "postgresStorage(url)",
  (namespace) => postgresStorage(POSTGRES_URL, { ...TABLES, namespace }),
  { unavailable: () => tcpUnreachable(POSTGRES_URL) },
);

describe("postgresStorage on a real PostgreSQL", () => {
  const cannotRun = suiteHooks(`PostgreSQL at ${POSTGRES_URL}`, () => tcpUnreachable(POSTGRES_URL));

  it("two storages with the same URL in one process close independently (unlike @keyv/postgres's shared pool)", async () => {
    if (cannotRun()) return;
    const first = postgresStorage(POSTGRES_URL, TABLES);
    const second = postgresStorage(POSTGRES_URL, TABLES);
    const name = `pools-${suffix}`;
    const paused = await createCodemodeRuntime({ name, connectors: [gate()], storage: first }).execute({
      code: "async () => gate.open({})",
    });
    expectStatus(paused, "paused");
    await first.close();
    const runtime = createCodemodeRuntime({ name, connectors: [gate()], storage: second });
    expectStatus(await runtime.approve({ executionId: paused.executionId }), "completed");
    await runtime.close();
    await second.close();
  });

  it("keys carry the namespace once; leases and the execution index are rows of their own tables", async () => {
    if (cannotRun()) return;
    const storage = postgresStorage(POSTGRES_URL, { ...TABLES, namespace: "shop" });
    const name = `layout-${suffix}`;
    const runtime = createCodemodeRuntime({ name, connectors: [gate()], storage });
    const paused = await runtime.execute({ code: "async () => gate.open({})" });
    expectStatus(paused, "paused");
    const lease = await storage.lock.acquire(`cm:${name}:lock:${paused.executionId}`, { ttlMs: 5_000, waitMs: 0 });
    const pool = new pg.Pool({ connectionString: POSTGRES_URL });
    try {
      const keys = (
        await pool.query(`SELECT key FROM "${TABLES.table}" WHERE key LIKE $1 ORDER BY key`, [`%${name}%`])
      ).rows.map((row: { key: string }) => row.key);
      expect(keys).toEqual([
        `shop:cm:${name}:c:${paused.executionId}`,
        `shop:cm:${name}:e:${paused.executionId}:0`,
        `shop:cm:${name}:h:${paused.executionId}`,
      ]);
      const leases = (
        await pool.query(`SELECT key, token FROM "${TABLES.leaseTable}" WHERE key LIKE $1`, [`%${name}%`])
      ).rows;
      expect(leases).toEqual([{ key: `shop:cm:${name}:lock:${paused.executionId}`, token: lease!.token }]);
      // The listing is a row of the index table, not a key of the store.
      const listed = (
        await pool.query(`SELECT namespace, id, status FROM "${TABLES.indexTable}" WHERE runtime = $1`, [name])
      ).rows;
      expect(listed).toEqual([{ namespace: "shop", id: paused.executionId, status: "paused" }]);
    } finally {
      await pool.end();
      await lease!.release();
      await runtime.close();
      await storage.close();
    }
  });

  it('the execution index is one row per execution, ids ordered by their bytes (a column in COLLATE "C", whatever the database\'s collation)', async () => {
    if (cannotRun()) return;
    const storage = postgresStorage(POSTGRES_URL, { ...TABLES, namespace: "shop" });
    const runtime = `ix-layout-${suffix}`;
    const index = storage.index.forRuntime(runtime);
    const pool = new pg.Pool({ connectionString: POSTGRES_URL });
    try {
      // "B" < "a" < "a-b" < "ab" in byte order; a locale collation (en_US) would say "a" < "ab" < "a-b" < "B".
      for (const id of ["ab", "B", "a-b", "a"]) await index.put({ id, status: "running", createdAt: 5, updatedAt: 5 });
      await index.put({ id: "a", status: "paused", createdAt: 5, updatedAt: 9 }, "running");
      expect((await index.list({ limit: 10, order: "oldest" })).map((row) => row.id)).toEqual(["B", "a", "a-b", "ab"]);
      const rows = (
        await pool.query(
          `SELECT namespace, runtime, id, status, created_at, updated_at FROM "${TABLES.indexTable}" WHERE runtime = $1 ORDER BY id`,
          [runtime],
        )
      ).rows;
      expect(rows).toEqual([
        { namespace: "shop", runtime, id: "B", status: "running", created_at: "5", updated_at: "5" },
        { namespace: "shop", runtime, id: "a", status: "paused", created_at: "5", updated_at: "9" },
        { namespace: "shop", runtime, id: "a-b", status: "running", created_at: "5", updated_at: "5" },
        { namespace: "shop", runtime, id: "ab", status: "running", created_at: "5", updated_at: "5" },
      ]);
      const column = await pool.query(
        `SELECT collation_name FROM information_schema.columns WHERE table_name = $1 AND column_name = 'id'`,
        [TABLES.indexTable],
      );
      expect(column.rows).toEqual([{ collation_name: "C" }]);
    } finally {
      await pool.end();
      await storage.close();
    }
  });

  it("R-ST-5 nothing listening at the URL: STORAGE_ERROR, never NOT_FOUND", async () => {
    const storage = postgresStorage("postgresql://postgres@127.0.0.1:1/test", TABLES);
    const runtime = createCodemodeRuntime({ connectors: [gate()], storage });
    await expectStorageErrors(runtime, "async () => gate.open({})");
    await runtime.close();
    await expect(storage.index.forRuntime("default").list({ limit: 10 })).rejects.toThrow();
    await storage.close();
  });
});

function gate() {
  return defineConnector({ name: "gate", tools: { open: { requiresApproval: true, execute: async () => "opened" } } });
}
