import { decodeDurable } from "../../log/durable-value.js";
import { errorOutcome, type Outcome } from "../../outcome.js";
import type { RuntimeContext } from "../context/index.js";
import { pendingActionOf, transformForModel } from "../passes/index.js";
import { pendingSeqsOf, readDivergence, toLogEntries } from "../records/index.js";
import { asStorageError } from "../transitions/index.js";

/**
 * The current `Outcome` of any execution, read from the store, so a process that did not run it
 * can answer "what happened to that run": `completed` with its result (transformed as the model
 * got it), `paused` with the pending action, `error` with its code. A run that is still running
 * is an error outcome with code BUSY (its outcome is not known yet); a rejected or rolled-back run
 * is an error outcome with code NOT_PAUSED that says who ended it. Null when there is no such
 * execution; a store failure rejects with STORAGE_ERROR (R-RT-3).
 */
export async function readOutcome(context: RuntimeContext, executionId: string): Promise<Outcome | null> {
  try {
    const head = await context.store.readHead(String(executionId));
    if (!head) return null;
    const { log } = await context.store.readCodeAndLog(head);
    const calls = toLogEntries(log);
    const id = head.id;
    switch (head.status) {
      case "completed": {
        const stored = await context.store.readResult(id);
        const logs = stored?.logs && stored.logs.length > 0 ? { logs: stored.logs } : {};
        const raw =
          stored?.result !== undefined
            ? decodeDurable(stored.result)
            : { omitted: stored?.omitted ?? "the result is not in the record" };
        return { status: "completed", executionId: id, result: transformForModel(context, raw, []), ...logs, calls }; // The logs stay as recorded.
      }
      case "paused": {
        const pending = pendingSeqsOf(head).flatMap((seq) => {
          const entry = log.get(seq);
          return entry?.state === "pending" ? [pendingActionOf(context, id, entry)] : [];
        });
        return { status: "paused", executionId: id, pending, calls };
      }
      case "error": {
        // A divergence is kept with the final record; other failures need no second read.
        const divergence =
          head.errorCode === "REPLAY_DIVERGENCE"
            ? readDivergence((await context.store.readResult(id))?.divergence)
            : undefined;
        return errorOutcome(id, head.errorCode ?? "SANDBOX_ERROR", head.error ?? "the execution failed", {
          calls,
          ...(divergence ? { divergence } : {}),
        });
      }
      case "running":
        return errorOutcome(id, "BUSY", `execution ${id} is running; its outcome is not known yet`, { calls });
      case "rejected": {
        // An uncaught denial (R-AP-9) ended it: the run's error says who denied what.
        if (head.errorCode === "APPROVAL_DENIED")
          return errorOutcome(id, "APPROVAL_DENIED", `execution ${id} was rejected: ${head.error ?? "denied"}`, {
            calls,
          });
        if (head.errorCode === "CANCELLED")
          return errorOutcome(id, "CANCELLED", `execution ${id} was ${head.error ?? "cancelled"}`, { calls });
        // A denial the program caught earlier is not what ended the run.
        const closed =
          calls.find((call) => call.decision?.approved === false && call.state !== "denied") ??
          calls.find((call) => call.state === "error" && call.requiresApproval);
        return errorOutcome(
          id,
          "NOT_PAUSED",
          `execution ${id} was ${closed?.error ?? head.error ?? "rejected"}${closed ? ` at ${closed.connector}.${closed.method}` : ""}`,
          { calls },
        );
      }
      case "rolled_back":
        return errorOutcome(id, "NOT_PAUSED", `execution ${id} was rolled back`, { calls });
    }
  } catch (error) {
    throw asStorageError(`could not read the outcome of execution ${String(executionId)}`, error);
  }
}
