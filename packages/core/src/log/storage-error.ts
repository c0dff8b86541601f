import { errorMessage } from "../error-message.js";
import { CodemodeError } from "../outcome.js";

/**
 * A failure met while talking to the store, as `CodemodeError` STORAGE_ERROR (R-RT-3): an outage
 * must never read as absence. Our own errors (BUSY, a corrupt record) pass through as they are.
 */
export function asStorageError(what: string, error: unknown): CodemodeError {
  if (CodemodeError.isInstance(error)) return error;
  return new CodemodeError("STORAGE_ERROR", `${what}: ${errorMessage(error)}`, { cause: error });
}
