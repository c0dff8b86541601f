import { EventEmitter } from "node:events";
import type { DatabaseSync, StatementSync } from "node:sqlite";

/**
 * A Keyv store adapter over `node:sqlite`, the SQLite built into Node.js 24: nothing to compile,
 * nothing to download. It keeps the table layout of `@keyv/sqlite` (`key VARCHAR(255) PRIMARY
 * KEY, value TEXT`), so a file written by one can be read by the other. `getMany` is one query
 * and `setMany` one transaction, which is what a pass's log load and its head + entry writes need
 * (R-ST-1, R-ST-2).
 *
 * `node:sqlite` is synchronous: each call blocks the event loop for the query, microseconds on
 * a local file, longer only while another process holds the write lock (up to `busy_timeout`).
 *
 * @example
 * const database = new DatabaseSync("app.sqlite", { timeout: 5_000 });
 * const keyv = new Keyv({ store: new NodeSqliteStore(database, { table: "keyv", url: "sqlite://app.sqlite" }) });
 */
export class NodeSqliteStore extends EventEmitter {
  readonly ttlSupport = false;
  readonly opts: { dialect: "sqlite"; url: string; table: string };
  namespace?: string;
  private readonly statements: {
    get: StatementSync;
    getMany: StatementSync;
    set: StatementSync;
    delete: StatementSync;
    deleteMany: StatementSync;
    clear: StatementSync;
  };

  constructor(
    private readonly database: DatabaseSync,
    options: { table: string; url: string },
  ) {
    super();
    this.opts = { dialect: "sqlite", url: options.url, table: options.table };
    const table = `"${options.table}"`;
    database.exec(`CREATE TABLE IF NOT EXISTS ${table} (key VARCHAR(255) PRIMARY KEY, value TEXT)`);
    this.statements = {
      get: database.prepare(`SELECT value FROM ${table} WHERE key = ?`),
      getMany: database.prepare(`SELECT key, value FROM ${table} WHERE key IN (SELECT value FROM json_each(?))`),
      set: database.prepare(
        `INSERT INTO ${table} (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value`,
      ),
      delete: database.prepare(`DELETE FROM ${table} WHERE key = ?`),
      deleteMany: database.prepare(`DELETE FROM ${table} WHERE key IN (SELECT value FROM json_each(?))`),
      clear: database.prepare(`DELETE FROM ${table} WHERE key LIKE ? ESCAPE '\\'`),
    };
  }

  async get(key: string): Promise<string | undefined> {
    const row = this.statements.get.get(key) as { value: string } | undefined;
    return row?.value;
  }

  async getMany(keys: string[]): Promise<Array<string | undefined>> {
    const rows = this.statements.getMany.all(JSON.stringify(keys)) as Array<{ key: string; value: string }>;
    const byKey = new Map(rows.map((row) => [row.key, row.value]));
    return keys.map((key) => byKey.get(key));
  }

  async set(key: string, value: string): Promise<boolean> {
    this.statements.set.run(key, value);
    return true;
  }

  async setMany(entries: Array<{ key: string; value: string }>): Promise<boolean[]> {
    this.transaction(() => {
      for (const entry of entries) this.statements.set.run(entry.key, entry.value);
    });
    return entries.map(() => true);
  }

  async delete(key: string): Promise<boolean> {
    return Number(this.statements.delete.run(key).changes) > 0;
  }

  async deleteMany(keys: string[]): Promise<boolean> {
    return Number(this.statements.deleteMany.run(JSON.stringify(keys)).changes) > 0;
  }

  async has(key: string): Promise<boolean> {
    return this.statements.get.get(key) !== undefined;
  }

  /** Deletes this namespace's keys (every key when there is no namespace). */
  async clear(): Promise<void> {
    const prefix = this.namespace ? `${this.namespace.replace(/[\\%_]/g, "\\$&")}:` : "";
    this.statements.clear.run(`${prefix}%`);
  }

  async disconnect(): Promise<void> {
    if (this.database.isOpen) this.database.close();
  }

  private transaction(work: () => void): void {
    this.database.exec("BEGIN IMMEDIATE");
    try {
      work();
      this.database.exec("COMMIT");
    } catch (error) {
      if (this.database.isTransaction) this.database.exec("ROLLBACK");
      throw error;
    }
  }
}
