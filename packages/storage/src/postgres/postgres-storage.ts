import type { KeyvLike } from "@codemode/core/store";
import KeyvPostgres from "@keyv/postgres";
import Keyv from "keyv";
import pg from "pg";
import { storedRows } from "../lock/stored-rows.js";
import { type CodemodeStorage, checkNamespace, type StorageOptions } from "../storage.js";
import { createPostgresExecutionIndex } from "./postgres-execution-index.js";
import { createPostgresLock, ensureSchema, qualifiedName, quoteIdentifier } from "./postgres-lock.js";

export interface PostgresStorageOptions extends StorageOptions {
  /**
   * The schema every table of the storage lives in (R-ST-7), created when missing. Every statement
   * names it, whatever the connection's `search_path` says (PostgreSQL's default, `"$user", public`,
   * finds a role's own schema first). Default "public".
   */
  schema?: string;
  /** Table of keys and values (the `@keyv/postgres` layout). Default "codemode_store". */
  table?: string;
  /** Table of leases. Default "codemode_leases". */
  leaseTable?: string;
  /** Table of the execution index, one row per execution. Default "codemode_executions". */
  indexTable?: string;
  /** Settings for the connection pool the storage opens from a URL (`pg` PoolConfig). Default: 10 connections, 5 s connect timeout. */
  pool?: pg.PoolConfig;
  /** Called with errors of idle pooled connections. Default: ignored (the next query fails and says why). */
  onError?: (error: unknown) => void;
}

/**
 * A store in one PostgreSQL database: executions and logs through `@keyv/postgres`, leases as
 * rows of a lease table (R-ST-4), the listing of executions as rows of an indexed table (one
 * round trip per status change). Every worker that points at the same database and namespace
 * can resume, approve, reject or expire any execution.
 *
 * Given a URL, the storage opens one `pg` pool of its own and uses it for both the store and the
 * leases, and ends it on `close()`. (`@keyv/postgres` on its own keeps a single pool per process,
 * shared by every instance and ended by whichever disconnects first; this storage does not use
 * that pool.) Given a pool, it uses that one and leaves it open.
 *
 * @example
 * import { postgresStorage } from "@codemode/storage/postgres";
 * const storage = postgresStorage("postgresql://postgres@127.0.0.1:5432/app");
 * const runtime = createCodemodeRuntime({ connectors: [github], storage });
 */
export function postgresStorage(urlOrPool: string | pg.Pool, options: PostgresStorageOptions = {}): CodemodeStorage {
  const namespace = checkNamespace(options.namespace);
  const schema = options.schema ?? "public";
  const table = options.table ?? "codemode_store";
  const leaseTable = options.leaseTable ?? "codemode_leases";
  const indexTable = options.indexTable ?? "codemode_executions";
  for (const name of [schema, table, leaseTable, indexTable]) quoteIdentifier(name);

  const ownsPool = typeof urlOrPool === "string";
  const pool =
    typeof urlOrPool === "string"
      ? new pg.Pool({ connectionString: urlOrPool, connectionTimeoutMillis: 5_000, ...options.pool })
      : urlOrPool;
  // An idle pooled connection that fails emits "error" on the pool; unheard, it would end the process.
  pool.on("error", (error) => options.onError?.(error));

  let closed = false;
  const query = async (text: string, values?: unknown[]) => {
    if (closed) throw new Error("the PostgreSQL storage is closed");
    return pool.query(text, values);
  };
  // Created lazily and again after a failure: a database that was down at start-up still gets its table.
  let tableReady: Promise<void> | undefined;
  const ensureTable = () =>
    (tableReady ??= ensureSchema({ query }, schema)
      .then(() =>
        query(`CREATE TABLE IF NOT EXISTS ${qualifiedName(schema, table)} (key VARCHAR(255) PRIMARY KEY, value TEXT)`),
      )
      .then(
        () => undefined,
        (error: unknown) => {
          tableReady = undefined;
          if ((error as { code?: unknown }).code === "23505" || (error as { code?: unknown }).code === "42P07") return;
          throw error;
        },
      ));

  const adapter = new PooledKeyvPostgres({
    table,
    schema,
    pool: {
      query: async (text: string, values?: unknown[]) => {
        await ensureTable();
        // `@keyv/postgres` creates its schema and table itself at start; ensureTable has done it,
        // without asking for rights a role confined to its own schema lacks.
        if (/^\s*CREATE\s/i.test(text)) return { rows: [] };
        return query(text, values);
      },
    },
  });
  const keyv = new Keyv({ store: adapter, namespace, throwOnErrors: true });
  keyv.on("error", () => {
    // Failures reject the call that met them (throwOnErrors); this listener only keeps Keyv quiet.
  });
  const rows = storedRows(keyv, (key) => keyv._getKeyPrefix(key));

  return {
    keyv: keyv as Keyv & KeyvLike,
    lock: createPostgresLock(
      { query },
      {
        table: leaseTable,
        schema,
        keyPrefix: `${namespace}:`,
        // Leases write the runtime's records themselves, fenced, exactly as Keyv would store them.
        data: {
          table,
          rows: async (entries) => {
            await ensureTable();
            return rows(entries);
          },
        },
      },
    ),
    index: createPostgresExecutionIndex(
      { query },
      { table: indexTable, schema, namespace, leases: { table: leaseTable, keyPrefix: `${namespace}:` } },
    ),
    async close() {
      if (closed) return;
      closed = true;
      if (ownsPool) await pool.end();
    },
  };
}

type Queryable = { query(text: string, values?: unknown[]): Promise<{ rows: unknown[] }> };

/**
 * `@keyv/postgres` with a pool chosen by the caller instead of its process-wide one. Its
 * constructor calls `connect()` after setting `opts`, so the pool travels in the options.
 */
class PooledKeyvPostgres extends KeyvPostgres {
  constructor(options: { table: string; schema: string; pool: Queryable }) {
    super({ table: options.table, schema: options.schema, pool: options.pool } as ConstructorParameters<
      typeof KeyvPostgres
    >[0]);
  }

  override async connect() {
    const pool = (this.opts as { pool: Queryable }).pool;
    return async (text: string, values?: unknown) =>
      (await pool.query(text, values as unknown[] | undefined)).rows as never[];
  }

  override async disconnect() {
    // The storage owns the pool; see postgresStorage's close().
  }
}
