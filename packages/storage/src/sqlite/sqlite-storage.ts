import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { DatabaseSync } from "node:sqlite";
import type { KeyvLike } from "@codemode/core/store";
import Keyv from "keyv";
import { storedRows } from "../lock/stored-rows.js";
import { type CodemodeStorage, checkNamespace, type StorageOptions } from "../storage.js";
import { NodeSqliteStore } from "./node-sqlite-store.js";
import { createSqliteExecutionIndex } from "./sqlite-execution-index.js";
import { createSqliteLock } from "./sqlite-lock.js";

export interface SqliteStorageOptions extends StorageOptions {
  /** Table of keys and values (the `@keyv/sqlite` layout). Default "keyv". */
  table?: string;
  /** Table of leases. Default "codemode_leases". */
  leaseTable?: string;
  /** Table of the execution index, one row per execution. Default "codemode_executions". */
  indexTable?: string;
  /** How long a write waits for another process's write to finish before failing. Default 5 000 ms. */
  busyTimeoutMs?: number;
}

/**
 * A store in one SQLite file: the embedded, persistent choice for one machine. A paused run
 * survives a restart, and every process on the machine that opens the same file can approve,
 * reject or expire it: leases and the listing of executions are rows of the same file (R-ST-4). Uses `node:sqlite`, built into
 * Node.js 24, so there is no native module to build. The file and its folder are created if
 * missing; the database runs in WAL mode so readers do not wait for a writer.
 *
 * Not for a file shared over a network file system: SQLite's locking is not reliable there;
 * use Redis or PostgreSQL for workers on several machines.
 *
 * @example
 * import { sqliteStorage } from "@codemode/storage/sqlite";
 * const storage = sqliteStorage(".codemode/agent.sqlite");
 * const runtime = createCodemodeRuntime({ connectors: [github], storage });
 */
export function sqliteStorage(path: string, options: SqliteStorageOptions = {}): CodemodeStorage {
  const namespace = checkNamespace(options.namespace);
  const table = checkTableName(options.table ?? "keyv");
  const leaseTable = checkTableName(options.leaseTable ?? "codemode_leases");
  const indexTable = checkTableName(options.indexTable ?? "codemode_executions");
  if (path !== ":memory:" && !path.startsWith("file:")) mkdirSync(dirname(path), { recursive: true });
  const database = new DatabaseSync(path, { timeout: options.busyTimeoutMs ?? 5_000 });
  try {
    database.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;");
  } catch (error) {
    database.close();
    throw error;
  }
  const adapter = new NodeSqliteStore(database, { table, url: `sqlite://${path}` });
  const keyv = new Keyv({ store: adapter, namespace, throwOnErrors: true });
  keyv.on("error", () => {
    // Failures reject the call that met them (throwOnErrors); this listener only keeps Keyv quiet.
  });
  // Leases write the runtime's records themselves, fenced, exactly as Keyv would store them.
  const rows = storedRows(keyv, (key) => keyv._getKeyPrefix(key));
  const lock = createSqliteLock(database, { table: leaseTable, keyPrefix: `${namespace}:`, data: { table, rows } });
  const index = createSqliteExecutionIndex(database, {
    table: indexTable,
    namespace,
    leases: { table: leaseTable, keyPrefix: `${namespace}:` },
  });
  return {
    keyv: keyv as Keyv & KeyvLike,
    lock,
    index,
    async close() {
      if (database.isOpen) database.close();
    },
  };
}

function checkTableName(name: string): string {
  if (!/^[A-Za-z_]\w{0,62}$/.test(name)) throw new TypeError(`not a plain SQL table name: ${JSON.stringify(name)}`);
  return name;
}
