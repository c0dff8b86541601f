import type { DatabaseSync, StatementSync } from "node:sqlite";
import type { ExecutionIndexProvider, IndexRow } from "@codemode/core/store";
import { checkedIndexProvider } from "../execution-index/checked-index.js";
import { mergePages } from "../execution-index/index-rows.js";
import { deleteRowSql, indexTableSql, rowOfColumns, upsertRowSql } from "../execution-index/index-table.js";

/**
 * The execution index as a table of the SQLite file, one row per execution:
 * `(namespace, runtime, id) → status, created_at, updated_at`, with an index on
 * `(namespace, runtime, status, created_at, id)`. A move is one upsert of the execution's own
 * row and a removal one delete (R-RT-4); a page reads at most `limit` index entries per status
 * it asks for. Every process on the machine that opens the file sees the same listing.
 *
 * Ids are compared as bytes (SQLite's BINARY collation), which for ASCII ids (UUIDs) is the
 * order of `compareRows`.
 *
 * Given `leases` (the lease table of `createSqliteLock` in the same file), a put with a fence
 * writes its row only while that lease holds its key, checked in the same statement.
 *
 * @example
 * const provider = createSqliteExecutionIndex(new DatabaseSync("app.sqlite"), { namespace: "codemode" });
 * const page = await provider.forRuntime("default").list({ statuses: ["paused"], limit: 20 });
 */
export function createSqliteExecutionIndex(
  database: DatabaseSync,
  options: { table?: string; namespace?: string; leases?: { table: string; keyPrefix?: string } } = {},
): ExecutionIndexProvider {
  const tableName = options.table ?? "codemode_executions";
  const table = `"${tableName}"`;
  const namespace = options.namespace ?? "";
  for (const statement of indexTableSql(table, `"${tableName}_by_status"`, { id: "TEXT", time: "INTEGER" }))
    database.exec(statement);

  const put = database.prepare(upsertRowSql(table, "VALUES (?, ?, ?, ?, ?, ?)"));
  const leases = options.leases;
  // As `put`, by a lease's holder: then the lease's key, its token and the time now.
  const putIfHeld =
    leases &&
    database.prepare(
      upsertRowSql(
        table,
        `SELECT ?, ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM "${leases.table}" WHERE key = ? AND token = ? AND expires_at > ?)`,
      ),
    );
  const remove = database.prepare(deleteRowSql(table, () => "?"));
  const count = database.prepare(
    `SELECT count(*) AS total FROM ${table} WHERE namespace = ? AND runtime = ? AND status = ?`,
  );
  const pageStatement = (order: "newest" | "oldest", hasCursor: boolean): StatementSync => {
    const direction = order === "newest" ? "DESC" : "ASC";
    const cursor = hasCursor ? `AND (created_at, id) ${order === "newest" ? "<" : ">"} (?, ?)` : "";
    return database.prepare(
      `SELECT id, created_at, updated_at FROM ${table} WHERE namespace = ? AND runtime = ? AND status = ? ${cursor}
       ORDER BY created_at ${direction}, id ${direction} LIMIT ?`,
    );
  };
  const pages = {
    newest: { first: pageStatement("newest", false), after: pageStatement("newest", true) },
    oldest: { first: pageStatement("oldest", false), after: pageStatement("oldest", true) },
  };

  return checkedIndexProvider({
    async put(runtimeName, row, fence) {
      const values = [namespace, runtimeName, row.id, row.status, row.createdAt, row.updatedAt] as const;
      if (fence && leases && putIfHeld)
        putIfHeld.run(...values, (leases.keyPrefix ?? "") + fence.key, fence.token, Date.now());
      else put.run(...values);
    },
    async remove(runtimeName, row) {
      remove.run(namespace, runtimeName, row.id, row.status);
    },
    async list(runtimeName, page) {
      if (page.limit === 0) return [];
      const statements = pages[page.order];
      const perStatus = snapshot(database, () =>
        page.statuses.map((status): IndexRow[] => {
          const found = page.after
            ? statements.after.all(namespace, runtimeName, status, page.after.createdAt, page.after.id, page.limit)
            : statements.first.all(namespace, runtimeName, status, page.limit);
          return (found as Array<{ id: string; created_at: number; updated_at: number }>).map((row) =>
            rowOfColumns(row, status),
          );
        }),
      );
      return mergePages(perStatus, page.order, page.limit);
    },
    async count(runtimeName, statuses) {
      return snapshot(database, () => {
        let total = 0;
        for (const status of new Set(statuses))
          total += Number((count.get(namespace, runtimeName, status) as { total: number }).total);
        return total;
      });
    },
  });
}

/** Runs reads of several statements on one snapshot, so a write of another process between them cannot show a row twice. */
function snapshot<T>(database: DatabaseSync, read: () => T): T {
  if (database.isTransaction) return read();
  database.exec("BEGIN");
  try {
    return read();
  } finally {
    if (database.isTransaction) database.exec("COMMIT");
  }
}
