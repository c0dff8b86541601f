import { CodemodeError } from "@codemode/core";
import { errorMessage } from "@codemode/core/adapters";

/** A store that could not be reached or opened: what it is and what went wrong, in one line. */
export interface StoreFailure {
  /** "file": a SQLite file (or its folder) that could not be opened; "server": Redis, PostgreSQL… */
  kind: "file" | "server";
  message: string;
}

// A connection that failed: the store's server is down, not listening, or not resolvable.
const NETWORK_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ETIMEDOUT",
  "EPIPE",
]);
// node-redis's own connection errors.
const REDIS_CONNECTION_ERRORS = new Set(["ConnectionTimeoutError", "SocketClosedUnexpectedlyError"]);
// PostgreSQL SQLSTATE classes: connection exception, invalid authorization, no such database, shutting down.
const POSTGRES_CONNECTION_STATES = /^(08|28|3D|57P0)/;

/**
 * The store failure behind an error, if it is one: a runtime STORAGE_ERROR, a SQLite file that
 * cannot be opened (`node:sqlite`, or its folder that cannot be created), or a connection to Redis
 * or PostgreSQL that failed. Stores open while the config module is imported, so a config that
 * throws one of these is a store that is unreachable (exit 7), not a config that is wrong (exit 6).
 *
 * @example
 * try { sqliteStorage("/srv") } catch (error) { storeFailure(error) } // { kind: "file", message: "unable to open database file" }
 */
export function storeFailure(error: unknown): StoreFailure | undefined {
  const message = messageOf(error);
  // Causes are followed only through the store's own errors (a STORAGE_ERROR wrapping the cause).
  let storage = false;
  for (let current = error, depth = 0; current !== undefined && depth < 8; depth += 1) {
    if (isSqliteError(current) || isFolderError(current)) return { kind: "file", message };
    if (isConnectionError(current)) return { kind: "server", message };
    if (!CodemodeError.isInstance(current) || current.code !== "STORAGE_ERROR") break;
    storage = true;
    current = (current as { cause?: unknown }).cause;
  }
  return storage ? { kind: "server", message } : undefined;
}

function isSqliteError(error: unknown): boolean {
  return fieldOf(error, "code") === "ERR_SQLITE_ERROR";
}

/** The SQLite store creates the folder of its file: a folder that cannot be made is a file that cannot be opened. */
function isFolderError(error: unknown): boolean {
  return fieldOf(error, "syscall") === "mkdir";
}

function isConnectionError(error: unknown): boolean {
  if (error instanceof AggregateError) return error.errors.some(isConnectionError);
  const code = fieldOf(error, "code");
  if (typeof code === "string" && NETWORK_CODES.has(code)) return true;
  if (REDIS_CONNECTION_ERRORS.has(String(fieldOf(error, "name")))) return true;
  // pg's DatabaseError carries a severity beside the SQLSTATE code.
  return (
    typeof fieldOf(error, "severity") === "string" && typeof code === "string" && POSTGRES_CONNECTION_STATES.test(code)
  );
}

/** An AggregateError (a connection tried on several addresses) says nothing itself: its first member does. */
function messageOf(error: unknown): string {
  if (error instanceof AggregateError && !error.message && error.errors.length > 0) return messageOf(error.errors[0]);
  return errorMessage(error);
}

function fieldOf(error: unknown, field: string): unknown {
  return typeof error === "object" && error !== null ? (error as Record<string, unknown>)[field] : undefined;
}
