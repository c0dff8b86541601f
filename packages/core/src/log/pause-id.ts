import type { StoredEntry } from "./interface.js";

/**
 * The id of the pause a pending call waits in (R-AP-9): its seq and how many times a person has
 * been asked about it (`2.1`, then `2.2` once the call is asked again after an interruption). An
 * answer carries it, and an answer to an earlier pause of the same call decides nothing.
 */
export function pauseIdOf(entry: Pick<StoredEntry, "seq" | "asked">): string {
  return `${entry.seq}.${entry.asked ?? 1}`;
}

/** Whether `pauseId` is a pause of call `seq` as `pauseIdOf` writes one: hostile input (a browser's claim) is checked with it. */
export function isPauseIdOf(seq: number, pauseId: unknown): pauseId is string {
  if (typeof pauseId !== "string") return false;
  const [of, asked, ...rest] = pauseId.split(".");
  return rest.length === 0 && of === String(seq) && /^[1-9]\d{0,8}$/.test(asked ?? "");
}
