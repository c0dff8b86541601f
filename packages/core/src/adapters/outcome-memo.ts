import type { Outcome } from "../outcome.js";

/**
 * Outcomes of runs started before a framework executes its tool, keyed by the framework's tool
 * call id. An adapter that must decide about approval before `execute` (AI SDK `toolApproval`)
 * runs the code then, and hands `execute` the same outcome instead of running the code twice.
 */
export interface OutcomeMemo {
  /** The outcome for `key`: started once by `start`, shared by every caller until taken or expired. */
  run(key: string, start: () => Promise<Outcome>): Promise<Outcome>;
  /** Removes and returns the outcome for `key`, if one was started. */
  take(key: string): Promise<Outcome> | undefined;
}

/**
 * An in-memory `OutcomeMemo`. It only bridges the moment between the approval decision and the
 * execute call of one generation, so entries expire (default after 10 minutes) and are capped
 * (default 1 000): nothing durable lives here, the outcome's run is already in the store.
 *
 * @example
 * const memo = createOutcomeMemo();
 * const outcome = await memo.run(toolCallId, () => runtime.execute({ code }));
 * // later, in execute:
 * return (await memo.take(toolCallId)) ?? runtime.execute({ code });
 */
export function createOutcomeMemo(options: { ttlMs?: number; maxEntries?: number } = {}): OutcomeMemo {
  const ttlMs = options.ttlMs ?? 10 * 60_000;
  const maxEntries = options.maxEntries ?? 1_000;
  const entries = new Map<string, { outcome: Promise<Outcome>; at: number }>();

  function sweep(now: number): void {
    for (const [key, entry] of entries) {
      // Insertion order is age order, so the first young entry ends the sweep.
      if (now - entry.at < ttlMs && entries.size < maxEntries) break;
      entries.delete(key);
    }
  }

  return {
    run(key, start) {
      const existing = entries.get(key);
      if (existing) return existing.outcome;
      const now = Date.now();
      sweep(now);
      const outcome = start();
      entries.set(key, { outcome, at: now });
      return outcome;
    },
    take(key) {
      // An old entry is still handed out: running the code again would repeat its effects.
      const entry = entries.get(key);
      entries.delete(key);
      return entry?.outcome;
    },
  };
}
