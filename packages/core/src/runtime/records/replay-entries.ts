import type { StoredEntry } from "../../log/interface.js";
import type { ReplayEntry } from "../../sandbox/executor.js";

/**
 * Recorded text the sandbox may hold at once to answer replays itself. All of a long log's
 * results in the isolate's heap together could exceed its limit where the first pass, using one
 * result at a time, did not; calls beyond the budget are answered by the host one by one.
 */
const PRELOAD_BUDGET_CHARS = 8_000_000;

/** Recorded calls and steps the sandbox may answer itself (steps always: their fn is skipped). */
export function replayEntries(log: ReadonlyMap<number, StoredEntry>): ReplayEntry[] {
  const entries: ReplayEntry[] = [];
  let budget = PRELOAD_BUDGET_CHARS;
  for (const entry of log.values()) {
    const isStep = entry.connector === "codemode" && entry.method === "step";
    if (isStep) {
      const name = (JSON.parse(entry.args) as { name: string }).name;
      const seqAfter = entry.seqAfter ?? entry.seq + 1;
      if (entry.state === "applied")
        entries.push({ kind: "step", seq: entry.seq, name, seqAfter, outcome: "value", text: entry.result ?? "" });
      else if (entry.state === "error")
        entries.push({
          kind: "step",
          seq: entry.seq,
          name,
          seqAfter,
          outcome: "error",
          text: entry.error ?? "the step failed",
        });
      continue;
    }
    if (entry.ephemeral) continue;
    // The sandbox compares the recorded text first and canonicalizes only when it differs.
    const size = entry.args.length + (entry.result?.length ?? entry.error?.length ?? 0);
    if (size > budget) continue;
    budget -= size;
    const base = {
      kind: "call" as const,
      seq: entry.seq,
      connector: entry.connector,
      method: entry.method,
      // An edited call matches the program's own arguments (R-AP-9); what ran is in `args`.
      args: typeof entry.requestedArgs === "string" ? entry.requestedArgs : entry.args,
    };
    if ((entry.state === "applied" || entry.state === "reverted") && entry.result !== undefined)
      entries.push({ ...base, outcome: "value", text: entry.result });
    else if (entry.state === "error")
      entries.push({ ...base, outcome: "error", text: entry.error ?? "the call failed" });
  }
  return entries;
}
