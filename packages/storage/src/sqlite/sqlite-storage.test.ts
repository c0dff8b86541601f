import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sqliteStorage } from "@codemode/storage/sqlite";
import { runExecutionIndexConformance, runStorageConformance } from "@codemode/storage/testing";
import { afterAll, describe, expect, it } from "vitest";

const folder = mkdtempSync(join(tmpdir(), "codemode-sqlite-"));
const file = join(folder, "conformance.sqlite");
afterAll(() => rmSync(folder, { recursive: true, force: true }));

runStorageConformance("sqliteStorage(file)", () => sqliteStorage(file), {
  fenced: true,
  dropLease: async (_storage, key) => {
    const { DatabaseSync } = await import("node:sqlite");
    const database = new DatabaseSync(file, { timeout: 5_000 });
    try {
      expect(
        Number(database.prepare(`DELETE FROM "codemode_leases" WHERE key = ?`).run(`codemode:${key}`).changes),
      ).toBe(1);
    } finally {
      database.close();
    }
  },
});
runExecutionIndexConformance("sqliteStorage(file)", (namespace) => sqliteStorage(file, { namespace }));

describe("sqliteStorage specifics", () => {
  it("creates the file's folder, keeps the @keyv/sqlite table layout and prefixes keys with the namespace", async () => {
    const nested = join(folder, "a", "b", "layout.sqlite");
    const storage = sqliteStorage(nested, { namespace: "shop" });
    await storage.keyv.set("cm:default:h:x", "{}");
    const { DatabaseSync } = await import("node:sqlite");
    const reader = new DatabaseSync(nested, { readOnly: true });
    try {
      const columns = reader.prepare("SELECT name, type FROM pragma_table_info('keyv')").all();
      expect(columns).toEqual([
        expect.objectContaining({ name: "key", type: "VARCHAR(255)" }),
        expect.objectContaining({ name: "value", type: "TEXT" }),
      ]);
      expect(reader.prepare("SELECT key FROM keyv").all()).toEqual([
        expect.objectContaining({ key: "shop:cm:default:h:x" }),
      ]);
    } finally {
      reader.close();
      await storage.close();
    }
  });

  it("keeps the execution index as rows of a table in the same file", async () => {
    const path = join(folder, "index-layout.sqlite");
    const storage = sqliteStorage(path, { namespace: "shop" });
    const index = storage.index.forRuntime("default");
    await index.put({ id: "run-1", status: "running", createdAt: 5, updatedAt: 5 });
    await index.put({ id: "run-1", status: "paused", createdAt: 5, updatedAt: 9 }, "running");
    const { DatabaseSync } = await import("node:sqlite");
    const reader = new DatabaseSync(path, { readOnly: true });
    try {
      expect(
        reader.prepare("SELECT namespace, runtime, id, status, created_at, updated_at FROM codemode_executions").all(),
      ).toEqual([
        { namespace: "shop", runtime: "default", id: "run-1", status: "paused", created_at: 5, updated_at: 9 },
      ]);
      const plan = reader
        .prepare(
          "EXPLAIN QUERY PLAN SELECT id FROM codemode_executions WHERE namespace = 'shop' AND runtime = 'default' AND status = 'paused' AND (created_at, id) < (9, 'x') ORDER BY created_at DESC, id DESC LIMIT 5",
        )
        .all();
      expect(JSON.stringify(plan)).toMatch(/USING (COVERING )?INDEX codemode_executions_by_status/);
      expect(JSON.stringify(plan)).not.toMatch(/TEMP B-TREE/);
    } finally {
      reader.close();
      await storage.close();
    }
  });

  it("rejects a namespace or table name that cannot be part of a key or a statement", () => {
    expect(() => sqliteStorage(join(folder, "bad.sqlite"), { namespace: "no spaces" })).toThrow(/namespace/);
    // Keyv would store "cm:…" keys unprefixed under this namespace and read them prefixed: refused.
    expect(() => sqliteStorage(join(folder, "bad.sqlite"), { namespace: "cm" })).toThrow(/reserved/);
    expect(() => sqliteStorage(join(folder, "bad.sqlite"), { table: "x; DROP TABLE y" })).toThrow(/table name/);
  });
});
