import type { RuntimeContext } from "../context/index.js";
import { asStorageError, expire } from "../transitions/index.js";
import { controlStep } from "./control-step.js";
import { rowsOldestFirst } from "./walk-rows.js";

/**
 * R-RE-2: paused executions last changed before the cutoff become `rejected`; running ones whose
 * host is gone (no live lease) become `error`; each is disposed. A submitted execution that no
 * worker has started yet (`submit`) is not "gone": it expires only once older than the cutoff. Paused rows are read oldest
 * first and the walk stops at the first one created after the cutoff (it cannot have been
 * changed before it), so the cost follows the paused and running runs, not the history.
 */
export async function expireStale(context: RuntimeContext, maxAgeMs: number): Promise<string[]> {
  try {
    return await expireOlderThan(context, maxAgeMs);
  } catch (error) {
    throw asStorageError("could not expire executions", error);
  }
}

async function expireOlderThan(context: RuntimeContext, maxAgeMs: number): Promise<string[]> {
  const cutoff = Date.now() - maxAgeMs;
  const expired: string[] = [];
  for await (const row of rowsOldestFirst(context, "paused", (candidate) => candidate.createdAt < cutoff)) {
    if (row.updatedAt >= cutoff) continue;
    if (await expireOne(context, row.id, cutoff)) expired.push(row.id);
  }
  for await (const row of rowsOldestFirst(context, "running")) {
    if (await context.lock.isHeld(context.store.keys.lock(row.id))) continue;
    if (await expireOne(context, row.id, cutoff)) expired.push(row.id);
  }
  return expired;
}

async function expireOne(context: RuntimeContext, executionId: string, cutoff: number): Promise<boolean> {
  return controlStep(
    context,
    executionId,
    { doing: "expire", waitMs: 0, busy: () => false, failed: rethrow },
    async ({ head, lease, owe }) => {
      if (head?.status === "paused" && head.updatedAt < cutoff) {
        owe(await expire(context, lease, head, "expired while waiting for approval"));
        return true;
      }
      if (head?.status !== "running") return false;
      // Submitted and never started (waiting in a queue): it expires by age, like a paused run.
      if (head.passes === 0 && head.createdAt >= cutoff) return false;
      const message =
        head.passes === 0
          ? "expired before any worker started it"
          : "the host running this execution went away (its lease lapsed)";
      owe(await expire(context, lease, head, message));
      return true;
    },
  );
}

/** A failure of one expiry stops the walk: `expireStale` reports it as STORAGE_ERROR. */
function rethrow(error: unknown): never {
  throw error;
}
