import { withLease } from "../../log/lease.js";
import type { ExecutionEndStatus } from "../../outcome.js";
import type { RuntimeContext } from "../context.js";
import { asStorageError } from "../failure.js";
import { afterTransition, transition } from "../transition.js";
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
  let ended: ExecutionEndStatus | undefined;
  await withLease(context.leases, executionId, 0, async (lease) => {
    const head = await context.store.readHead(executionId);
    if (!head) return;
    if (head.status === "paused" && head.updatedAt < cutoff) {
      await transition(context, lease, head, "rejected", {
        error: { message: "expired while waiting for approval" },
        closePending: "expired while waiting for approval",
      });
    } else if (head.status === "running" && head.passes === 0) {
      // Submitted and never started (waiting in a queue): it expires by age, like a paused run.
      if (head.createdAt >= cutoff) return;
      await transition(context, lease, head, "error", {
        error: { message: "expired before any worker started it", code: "SANDBOX_ERROR" },
      });
    } else if (head.status === "running") {
      await transition(context, lease, head, "error", {
        error: { message: "the host running this execution went away (its lease lapsed)", code: "SANDBOX_ERROR" },
      });
    } else {
      return;
    }
    ended = head.status as ExecutionEndStatus;
    await lease.release();
  });
  if (!ended) return false;
  await afterTransition(context, executionId, { kind: "dispose", status: ended });
  return true;
}
