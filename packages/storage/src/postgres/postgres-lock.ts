import type { Lease, LockProvider } from "@codemode/core/store";
import { acquireByPolling, localWaiting, wholeTtlMs } from "../lock/acquire-by-polling.js";
import type { StoredRows } from "../lock/stored-rows.js";

/** What the lock needs of a `pg` Pool (or Client). */
export interface PostgresQueryable {
  query(text: string, values?: unknown[]): Promise<{ rowCount: number | null; rows: unknown[] }>;
}

/**
 * Leases as rows of a table, shared by every process that uses the same database (R-ST-4).
 * A row, unlike an advisory lock, does not belong to a connection, so a lease survives
 * connection pooling and is released by whichever pooled connection runs the release. Taking a
 * key is one `INSERT … ON CONFLICT DO UPDATE … WHERE expires_at <= now`: it succeeds only when
 * the key is free or its lease lapsed. Renew and release check the token. Expiry uses the
 * database server's clock, so hosts with drifting clocks still agree.
 *
 * Given `data` (the key-value table of the storage's Keyv, in the same database, and how Keyv
 * stores its entries there), leases offer the fenced write (`setIfHeld`): one statement that
 * upserts the rows only while the lease row still holds this token unexpired, and share-locks
 * that row until it commits, so a takeover waits for the write instead of racing it.
 *
 * @example
 * const lock = createPostgresLock(pool, { table: "codemode_leases" });
 * const lease = await lock.acquire("job-7", { ttlMs: 30_000, waitMs: 5_000 });
 */
export function createPostgresLock(
  pool: PostgresQueryable,
  options: {
    table?: string;
    /** The schema of both tables (R-ST-7). Default "public". */
    schema?: string;
    keyPrefix?: string;
    data?: { table: string; rows: StoredRows };
  } = {},
): LockProvider {
  const schema = options.schema ?? "public";
  const table = qualifiedName(schema, options.table ?? "codemode_leases");
  const data = options.data;
  // $1 lease key, $2 token, $3 keys, $4 values. No row is written unless the lease holds.
  const setIfHeld =
    data &&
    `WITH fence AS (SELECT 1 FROM ${table} WHERE key = $1 AND token = $2 AND expires_at > clock_timestamp() FOR SHARE)
     INSERT INTO ${qualifiedName(schema, data.table)} (key, value)
     SELECT stored.key, stored.value FROM unnest($3::text[], $4::text[]) AS stored(key, value) WHERE EXISTS (SELECT 1 FROM fence)
     ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value`;
  const prefix = options.keyPrefix ?? "";
  const local = localWaiting();
  let ready: Promise<void> | undefined;
  const ensureTable = () =>
    (ready ??= ensureSchema(pool, schema)
      .then(() =>
        pool.query(
          `CREATE TABLE IF NOT EXISTS ${table} (key TEXT PRIMARY KEY, token TEXT NOT NULL, expires_at TIMESTAMPTZ NOT NULL)`,
        ),
      )
      .then(
        () => undefined,
        (error: unknown) => {
          // Two processes creating the table at once: the loser sees a duplicate; the table is there.
          if (isDuplicateObject(error)) return;
          ready = undefined;
          throw error;
        },
      ));

  return {
    async acquire(key, { ttlMs, waitMs }) {
      await ensureTable();
      const rowKey = prefix + key;
      return acquireByPolling(
        rowKey,
        async (token) => {
          const taken = await pool.query(
            // The NOT EXISTS guard makes a try on a held key a plain read: without it, every poll
            // would lock the row and commit, and a busy key would cost a disk flush per waiter per poll.
            `INSERT INTO ${table} (key, token, expires_at)
           SELECT $1, $2, clock_timestamp() + $3::double precision * interval '1 millisecond'
           WHERE NOT EXISTS (SELECT 1 FROM ${table} WHERE key = $1 AND expires_at > clock_timestamp())
           ON CONFLICT (key) DO UPDATE SET token = EXCLUDED.token, expires_at = EXCLUDED.expires_at
           WHERE ${table}.expires_at <= clock_timestamp()
           RETURNING token`,
            [rowKey, token, wholeTtlMs(ttlMs)],
          );
          if (taken.rowCount !== 1) return null;
          const lease = postgresLease(pool, table, rowKey, token, () => local.wakeups.wake(rowKey));
          if (data && setIfHeld) {
            lease.setIfHeld = async (entries) => {
              if (entries.length === 0) return true;
              const stored = await data.rows(entries);
              const written = await pool.query(setIfHeld, [
                rowKey,
                token,
                stored.map((row) => row.key),
                stored.map((row) => row.value),
              ]);
              return (written.rowCount ?? 0) > 0;
            };
          }
          return lease;
        },
        waitMs,
        local,
      );
    },
    async isHeld(key) {
      await ensureTable();
      const found = await pool.query(`SELECT 1 FROM ${table} WHERE key = $1 AND expires_at > clock_timestamp()`, [
        prefix + key,
      ]);
      return (found.rowCount ?? 0) > 0;
    },
  };
}

function postgresLease(
  pool: PostgresQueryable,
  table: string,
  rowKey: string,
  token: string,
  released: () => void,
): Lease {
  return {
    token,
    async renew(ttlMs) {
      // A lapsed lease is not revived even when nobody took the key: its holder was taken for gone.
      const renewed = await pool.query(
        `UPDATE ${table} SET expires_at = clock_timestamp() + $3::double precision * interval '1 millisecond'
         WHERE key = $1 AND token = $2 AND expires_at > clock_timestamp()`,
        [rowKey, token, wholeTtlMs(ttlMs)],
      );
      return renewed.rowCount === 1;
    },
    async release() {
      await pool.query(`DELETE FROM ${table} WHERE key = $1 AND token = $2`, [rowKey, token]);
      released();
    },
  };
}

/**
 * A table or schema name, quoted. Only plain lower-case names are taken (letters, digits, `_`,
 * `$`): `@keyv/postgres` writes names unquoted, which PostgreSQL folds to lower case, so a name
 * with capitals would address another table in its statements than in ours.
 */
export function quoteIdentifier(name: string): string {
  if (!/^[a-z_][a-z0-9_$]{0,62}$/.test(name))
    throw new TypeError(
      `not a plain lower-case SQL identifier (letters a-z, digits, _ and $, at most 63): ${JSON.stringify(name)}`,
    );
  return `"${name}"`;
}

/** `"schema"."table"`: every statement of the storage names its tables so (R-ST-7), never through `search_path`. */
export function qualifiedName(schema: string, table: string): string {
  return `${quoteIdentifier(schema)}.${quoteIdentifier(table)}`;
}

/**
 * Creates `schema` unless it exists. Looked up first: `CREATE SCHEMA IF NOT EXISTS` asks for the
 * right to create schemas even when the schema is there, which a role confined to its own schema
 * does not have.
 */
export async function ensureSchema(pool: PostgresQueryable, schema: string): Promise<void> {
  const found = await pool.query("SELECT 1 FROM pg_namespace WHERE nspname = $1", [schema]);
  if ((found.rowCount ?? 0) > 0) return;
  try {
    await pool.query(`CREATE SCHEMA IF NOT EXISTS ${quoteIdentifier(schema)}`);
  } catch (error) {
    // Two processes creating it at once: the loser sees a duplicate; the schema is there.
    if (!isDuplicateObject(error)) throw error;
  }
}

/** unique_violation (a racing CREATE of the same type) or duplicate_table. */
export function isDuplicateObject(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === "23505" || code === "42P07";
}
