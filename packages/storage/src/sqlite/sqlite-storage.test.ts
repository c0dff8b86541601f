import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runStorageConformance } from "../testing/index.js";
import { sqliteStorage } from "./sqlite-storage.js";

const folder = mkdtempSync(join(tmpdir(), "codemode-sqlite-"));
const file = join(folder, "conformance.sqlite");
afterAll(() => rmSync(folder, { recursive: true, force: true }));

runStorageConformance("sqliteStorage(file)", () => sqliteStorage(file));

describe("sqliteStorage specifics", () => {
  it("creates the file's folder, keeps the @keyv/sqlite table layout and prefixes keys with the namespace", async () => {
    const nested = join(folder, "a", "b", "layout.sqlite");
    const storage = sqliteStorage(nested, { namespace: "shop" });
    await storage.keyv.set("cm:default:h:x", "{}");
    const { DatabaseSync } = await import("node:sqlite");
    const reader = new DatabaseSync(nested, { readOnly: true });
    try {
      const columns = reader.prepare("SELECT name, type FROM pragma_table_info('keyv')").all();
      expect(columns).toEqual([expect.objectContaining({ name: "key", type: "VARCHAR(255)" }), expect.objectContaining({ name: "value", type: "TEXT" })]);
      expect(reader.prepare("SELECT key FROM keyv").all()).toEqual([expect.objectContaining({ key: "shop:cm:default:h:x" })]);
    } finally {
      reader.close();
      await storage.close();
    }
  });

  it("rejects a namespace or table name that cannot be part of a key or a statement", () => {
    expect(() => sqliteStorage(join(folder, "bad.sqlite"), { namespace: "no spaces" })).toThrow(/namespace/);
    expect(() => sqliteStorage(join(folder, "bad.sqlite"), { table: "x; DROP TABLE y" })).toThrow(/table name/);
  });
});
