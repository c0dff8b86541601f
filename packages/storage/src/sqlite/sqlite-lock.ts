import type { DatabaseSync } from "node:sqlite";
import type { Lease, LockProvider } from "@codemode/core/store";
import { acquireByPolling, localWaiting, wholeTtlMs } from "../lock/acquire-by-polling.js";
import type { KeyvEntries, StoredRows } from "../lock/stored-rows.js";

/**
 * Leases as rows of a table in the SQLite file, shared by every process on the machine that
 * opens the same file (R-ST-4). Taking a key is one `INSERT … ON CONFLICT DO UPDATE … WHERE
 * expires_at <= now` (SQLite serialises writers, so two processes cannot both win); renew and
 * release check the token. Times are the machine's clock in milliseconds, which every process
 * on one machine shares.
 *
 * Given `data` (the key-value table of the storage's Keyv in the same file, and how Keyv stores
 * its entries there), leases offer the fenced write (`setIfHeld`): one transaction that checks
 * the lease row and upserts the rows, holding SQLite's write lock throughout.
 *
 * @example
 * const lock = createSqliteLock(new DatabaseSync("app.sqlite"));
 * const lease = await lock.acquire("job-7", { ttlMs: 30_000, waitMs: 5_000 });
 */
export function createSqliteLock(
  database: DatabaseSync,
  options: { table?: string; keyPrefix?: string; data?: { table: string; rows: StoredRows } } = {},
): LockProvider {
  const table = `"${options.table ?? "codemode_leases"}"`;
  const prefix = options.keyPrefix ?? "";
  const local = localWaiting();
  database.exec(
    `CREATE TABLE IF NOT EXISTS ${table} (key TEXT PRIMARY KEY, token TEXT NOT NULL, expires_at INTEGER NOT NULL)`,
  );
  const take = database.prepare(
    `INSERT INTO ${table} (key, token, expires_at) VALUES (?, ?, ?)
     ON CONFLICT(key) DO UPDATE SET token = excluded.token, expires_at = excluded.expires_at
     WHERE ${table}.expires_at <= ?
     RETURNING token`,
  );
  // A lapsed lease is not revived even when nobody took the key: its holder was taken for gone.
  const renew = database.prepare(`UPDATE ${table} SET expires_at = ? WHERE key = ? AND token = ? AND expires_at > ?`);
  const release = database.prepare(`DELETE FROM ${table} WHERE key = ? AND token = ?`);
  const held = database.prepare(`SELECT 1 AS held FROM ${table} WHERE key = ? AND expires_at > ?`);
  const holds = database.prepare(`SELECT 1 AS held FROM ${table} WHERE key = ? AND token = ? AND expires_at > ?`);
  const data = options.data;
  const upsert =
    data &&
    database.prepare(
      `INSERT INTO "${data.table}" (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value`,
    );
  const setIfHeld = async (rowKey: string, token: string, entries: KeyvEntries): Promise<boolean> => {
    if (!data || !upsert) throw new Error("this lock has no data table");
    const stored = await data.rows(entries);
    // Synchronous from BEGIN to COMMIT: nothing of this process runs in between, and the write
    // lock keeps every other process out.
    database.exec("BEGIN IMMEDIATE");
    try {
      if (holds.get(rowKey, token, Date.now()) === undefined) {
        database.exec("ROLLBACK");
        return false;
      }
      for (const row of stored) upsert.run(row.key, row.value);
      database.exec("COMMIT");
      return true;
    } catch (error) {
      if (database.isTransaction) database.exec("ROLLBACK");
      throw error;
    }
  };

  const lease = (rowKey: string, token: string): Lease => ({
    token,
    ...(data ? { setIfHeld: (entries: KeyvEntries) => setIfHeld(rowKey, token, entries) } : {}),
    async renew(ttlMs) {
      const now = Date.now();
      return Number(renew.run(now + wholeTtlMs(ttlMs), rowKey, token, now).changes) === 1;
    },
    async release() {
      release.run(rowKey, token);
      local.wakeups.wake(rowKey);
    },
  });

  return {
    async acquire(key, { ttlMs, waitMs }) {
      const rowKey = prefix + key;
      return acquireByPolling(
        rowKey,
        async (token) => {
          const now = Date.now();
          const row = take.get(rowKey, token, now + wholeTtlMs(ttlMs), now);
          return row === undefined ? null : lease(rowKey, token);
        },
        waitMs,
        local,
      );
    },
    async isHeld(key) {
      return held.get(prefix + key, Date.now()) !== undefined;
    },
  };
}
