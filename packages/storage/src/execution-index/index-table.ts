import type { IndexRow } from "@codemode/core/store";

// The execution index as a SQL table, as PostgreSQL and SQLite both keep it: one row per
// execution, `(namespace, runtime, id) → status, created_at, updated_at`, and an index on
// `(namespace, runtime, status, created_at, id)` that serves every page. A move is one upsert of
// the execution's own row and a removal one delete: nothing that other executions share (R-RT-4).

/** The columns of a row as the driver reads them back (PostgreSQL hands a BIGINT over as text). */
export interface IndexColumns {
  id: string;
  created_at: number | string;
  updated_at: number | string;
}

/**
 * The statements that create the table and its index, if missing. `types.id` must compare ids as
 * bytes (the order of `compareRows` for ASCII ids); `types.time` holds millisecond timestamps.
 */
export function indexTableSql(
  table: string,
  indexName: string,
  types: { id: string; time: string },
): [createTable: string, createIndex: string] {
  return [
    `CREATE TABLE IF NOT EXISTS ${table} (
      namespace TEXT NOT NULL,
      runtime TEXT NOT NULL,
      id ${types.id} NOT NULL,
      status TEXT NOT NULL,
      created_at ${types.time} NOT NULL,
      updated_at ${types.time} NOT NULL,
      PRIMARY KEY (namespace, runtime, id))`,
    `CREATE INDEX IF NOT EXISTS ${indexName} ON ${table} (namespace, runtime, status, created_at, id)`,
  ];
}

/**
 * Inserts an execution's row, or moves the one it has. `values` gives the six columns in order
 * (namespace, runtime, id, status, created_at, updated_at): a VALUES list, or a SELECT that
 * yields nothing when the write must not happen.
 */
export function upsertRowSql(table: string, values: string): string {
  return `INSERT INTO ${table} (namespace, runtime, id, status, created_at, updated_at) ${values}
    ON CONFLICT (namespace, runtime, id) DO UPDATE SET status = excluded.status, created_at = excluded.created_at, updated_at = excluded.updated_at`;
}

/**
 * Deletes an execution's row (parameters: namespace, runtime, id, status), only while it is listed
 * under the status the caller saw: a row that moved since stays. `parameter` writes the driver's
 * marker for a position from 1: `$1` for PostgreSQL, `?` for SQLite.
 */
export function deleteRowSql(table: string, parameter: (position: number) => string): string {
  return `DELETE FROM ${table} WHERE namespace = ${parameter(1)} AND runtime = ${parameter(2)} AND id = ${parameter(3)} AND status = ${parameter(4)}`;
}

/** An execution's row, from its columns and the status it is listed under. */
export function rowOfColumns(columns: IndexColumns, status: IndexRow["status"]): IndexRow {
  return {
    id: columns.id,
    status,
    createdAt: Number(columns.created_at),
    updatedAt: Number(columns.updated_at),
  };
}
