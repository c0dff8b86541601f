import type { ExecutionHead, StoredEntry } from "../../log/interface.js";
import { CodemodeError } from "../../outcome.js";
import type { RuntimeContext } from "../context/index.js";

/**
 * R-AP-5: the connectors an execution needs that this runtime lacks — the code's own and those
 * its log used (a snippet run inside it may add some) — as a MISSING_CONNECTOR error, or
 * undefined when all are configured. `hint` ends the message with what to do.
 */
export function missingConnectors(
  context: RuntimeContext,
  head: ExecutionHead,
  log: ReadonlyMap<number, StoredEntry>,
  hint = "",
): CodemodeError | undefined {
  const used = new Set([
    ...head.connectors,
    ...[...log.values()].map((entry) => entry.connector).filter((name) => name !== "codemode"),
  ]);
  const missing = [...used].filter((name) => !context.connectors.has(name));
  if (missing.length === 0) return undefined;
  return new CodemodeError(
    "MISSING_CONNECTOR",
    `execution ${head.id} uses connector${missing.length > 1 ? "s" : ""} ${missing.join(", ")}, not configured in this runtime${hint}`,
  );
}
