/** The tasks extension of the 2026-07-28 protocol (SEP-2663), as clients and servers declare it in capabilities. */
export const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";

/** Where a 2026-07-28 request claims the protocol revision it speaks: a key of its `_meta`. */
const PROTOCOL_VERSION_META = "io.modelcontextprotocol/protocolVersion";

/**
 * Whether a JSON-RPC message claims a protocol revision in its `_meta`, as every 2026-07-28
 * request does (2025 messages never do: they agreed on one at `initialize`).
 */
export function claimsRevision(message: unknown): boolean {
  if (typeof message !== "object" || message === null || Array.isArray(message)) return false;
  const meta = (message as { params?: { _meta?: unknown } }).params?._meta;
  return (
    typeof meta === "object" && meta !== null && (meta as Record<string, unknown>)[PROTOCOL_VERSION_META] !== undefined
  );
}
