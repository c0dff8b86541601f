import type { StoredEntry } from "./interface.js";

/**
 * The id of the pause a pending call waits in (R-AP-9): its seq and how many times a person has
 * been asked about it (`2.1`, then `2.2` once the call is asked again after an interruption). An
 * answer carries it, and an answer to an earlier pause of the same call decides nothing.
 */
export function pauseIdOf(entry: Pick<StoredEntry, "seq" | "asked">): string {
  return `${entry.seq}.${entry.asked ?? 1}`;
}
