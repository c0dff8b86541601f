import type { ExecutionIndexProvider } from "@codemode/core/store";
import { checkedIndexProvider } from "../execution-index/checked-index.js";
import { checkStatus } from "../execution-index/index-rows.js";
import {
  deleteRowSql,
  type IndexColumns,
  indexTableSql,
  rowOfColumns,
  upsertRowSql,
} from "../execution-index/index-table.js";
import {
  ensureSchema,
  isDuplicateObject,
  type PostgresQueryable,
  qualifiedName,
  quoteIdentifier,
} from "./postgres-lock.js";

/**
 * The execution index as a PostgreSQL table, one row per execution:
 * `(namespace, runtime, id) → status, created_at, updated_at`, with an index on
 * `(namespace, runtime, status, created_at, id)` that serves every page. A move is one upsert of
 * the execution's own row, a removal one delete: one round trip each, and no row, lock or
 * counter that other executions share (R-RT-4). A page is one query that reads at most `limit`
 * index entries per status it asks for. The table is created on first use.
 *
 * Ids are compared as bytes (`COLLATE "C"`), which for ASCII ids (UUIDs) is the order of
 * `compareRows`; a database's default collation would order them by locale instead.
 *
 * Given `leases` (the lease table of `createPostgresLock` in the same database), a put with a
 * fence writes its row only while that lease holds its key, checked in the same statement.
 *
 * @example
 * const provider = createPostgresExecutionIndex(pool, { table: "codemode_executions", namespace: "codemode" });
 * const page = await provider.forRuntime("default").list({ statuses: ["paused"], limit: 20 });
 */
export function createPostgresExecutionIndex(
  pool: PostgresQueryable,
  options: {
    table?: string;
    /** The schema of the index table and of the lease table (R-ST-7). Default "public". */
    schema?: string;
    namespace?: string;
    leases?: { table: string; keyPrefix?: string };
  } = {},
): ExecutionIndexProvider {
  const tableName = options.table ?? "codemode_executions";
  const schemaName = options.schema ?? "public";
  const table = qualifiedName(schemaName, tableName);
  const namespace = options.namespace ?? "";
  const statements = indexTableSql(table, quoteIdentifier(`${tableName}_by_status`.slice(0, 63)), {
    id: 'TEXT COLLATE "C"',
    time: "BIGINT",
  });
  let ready: Promise<void> | undefined;
  const ensureTable = () =>
    (ready ??= (async () => {
      await ensureSchema(pool, schemaName);
      for (const statement of statements) await ignoreDuplicate(pool.query(statement));
    })().catch((error: unknown) => {
      // A database that was down at start-up gets its table on a later call.
      ready = undefined;
      throw error;
    }));
  const query = async (text: string, values: unknown[]) => {
    await ensureTable();
    return pool.query(text, values);
  };

  const put = upsertRowSql(table, "VALUES ($1, $2, $3, $4, $5, $6)");
  const leases = options.leases;
  // As `put`, by a lease's holder: $7 the lease's key, $8 its token.
  const putIfHeld =
    leases &&
    upsertRowSql(
      table,
      `SELECT $1, $2, $3, $4, $5::bigint, $6::bigint
    WHERE EXISTS (SELECT 1 FROM ${qualifiedName(schemaName, leases.table)} WHERE key = $7 AND token = $8 AND expires_at > clock_timestamp() FOR SHARE)`,
    );
  const remove = deleteRowSql(table, (position) => `$${position}`);
  // One index range per status (a lateral count each): `status = ANY(...)` lets a planner without
  // statistics scan every row of the runtime, paused ones included, so the count before each
  // execute would grow with history.
  const count = `SELECT coalesce(sum(counted.total), 0) AS total FROM unnest($3::text[]) AS wanted(status)
    CROSS JOIN LATERAL (SELECT count(*) AS total FROM ${table} WHERE namespace = $1 AND runtime = $2 AND status = wanted.status) AS counted`;

  return checkedIndexProvider({
    async put(runtimeName, row, fence) {
      const values = [namespace, runtimeName, row.id, row.status, row.createdAt, row.updatedAt];
      if (fence && leases && putIfHeld)
        await query(putIfHeld, [...values, (leases.keyPrefix ?? "") + fence.key, fence.token]);
      else await query(put, values);
    },
    async remove(runtimeName, row) {
      await query(remove, [namespace, runtimeName, row.id, row.status]);
    },
    async list(runtimeName, page) {
      if (page.limit === 0 || page.statuses.length === 0) return [];
      const values: unknown[] = [namespace, runtimeName, page.statuses];
      if (page.after) values.push(page.after.createdAt, page.after.id);
      values.push(page.limit);
      const found = await query(listSql(table, page.order, page.after !== undefined), values);
      return (found.rows as Array<IndexColumns & { status: string }>).map((row) => {
        checkStatus(row.status);
        return rowOfColumns(row, row.status);
      });
    },
    async count(runtimeName, statuses) {
      if (statuses.length === 0) return 0;
      const found = await query(count, [namespace, runtimeName, [...new Set(statuses)]]);
      return Number((found.rows[0] as { total: string } | undefined)?.total ?? 0);
    },
  });
}

/**
 * One page: per wanted status, the first `limit` entries of the index after the cursor (a range
 * scan that stops at `limit`), then merged and cut to `limit`. With `status = ANY(…)` instead,
 * PostgreSQL would read and sort every row of those statuses.
 */
function listSql(table: string, order: "newest" | "oldest", hasCursor: boolean): string {
  const direction = order === "newest" ? "DESC" : "ASC";
  const beyond = order === "newest" ? "<" : ">";
  const cursor = hasCursor ? `AND (listed.created_at, listed.id) ${beyond} ($4::bigint, $5::text)` : "";
  const limit = hasCursor ? "$6" : "$4";
  return `SELECT page.id, page.status, page.created_at, page.updated_at
    FROM unnest($3::text[]) AS wanted(status)
    CROSS JOIN LATERAL (
      SELECT listed.id, listed.status, listed.created_at, listed.updated_at FROM ${table} AS listed
      WHERE listed.namespace = $1 AND listed.runtime = $2 AND listed.status = wanted.status ${cursor}
      ORDER BY listed.created_at ${direction}, listed.id ${direction}
      LIMIT ${limit}
    ) AS page
    ORDER BY page.created_at ${direction}, page.id ${direction}
    LIMIT ${limit}`;
}

/** Two processes creating the table at once: the loser sees a duplicate; the table is there. */
async function ignoreDuplicate(creating: Promise<unknown>): Promise<void> {
  try {
    await creating;
  } catch (error) {
    if (!isDuplicateObject(error)) throw error;
  }
}
