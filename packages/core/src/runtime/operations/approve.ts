import { clipMessage } from "../../log/durable-value.js";
import type { ExecutionHead, StoredEntry } from "../../log/interface.js";
import { type ErrorOutcome, errorOutcome, type Outcome } from "../../outcome.js";
import type { RuntimeContext } from "../context.js";
import { decisionOf, toLogEntries } from "../log-view.js";
import { missingConnectors } from "../missing-connectors.js";
import { resume } from "../transition.js";
import { handOver } from "./control-step.js";

export interface ApproveInput {
  executionId: string;
  /** The action the person saw; refused (NOT_PAUSED) when it is not the one pending now (R-AP-7). */
  seq?: number;
  by?: string;
  reason?: string;
}

/**
 * Approves the pending action of a paused execution and resumes it (R-AP-2): the lease is taken
 * (or BUSY), the action marked approved with who and why, and a new pass runs under the same
 * lease. Anything stale comes back as an error outcome, never a throw (R-AP-3).
 */
export async function approve(context: RuntimeContext, input: ApproveInput): Promise<Outcome> {
  const executionId = typeof input?.executionId === "string" ? input.executionId : "";
  if (!executionId)
    return errorOutcome(String(input?.executionId ?? ""), "NOT_FOUND", "approve needs an executionId", { calls: [] });
  return handOver(context, executionId, {}, async (lease, start) => {
    const head = await context.store.readHead(executionId);
    if (!head) return errorOutcome(executionId, "NOT_FOUND", `no execution ${executionId}`, { calls: [] });
    const { code, log } = await context.store.readCodeAndLog(head);
    const refused = checkApprovable(context, head, log, input);
    if (refused) return refused;
    const pendingSeq = head.pendingSeq as number;
    // Who and why are written to the log: held to the message limit like everything written.
    const by = typeof input.by === "string" ? clipMessage(input.by) : input.by;
    const reason = typeof input.reason === "string" ? clipMessage(input.reason) : input.reason;
    const approved: StoredEntry = { ...(log.get(pendingSeq) as StoredEntry), decision: decisionOf(true, by, reason) };
    log.set(pendingSeq, approved);
    await resume(context, lease, head, approved);
    return start({ head, code, log });
  });
}

/** Why this approval must change nothing, or undefined when it may go ahead. */
function checkApprovable(
  context: RuntimeContext,
  head: ExecutionHead,
  log: Map<number, StoredEntry>,
  input: ApproveInput,
): ErrorOutcome | undefined {
  const executionId = head.id;
  const calls = () => ({ calls: toLogEntries(log) });
  // R-AP-3: a stale approval must never revive a finished or running execution.
  if (head.status !== "paused")
    return errorOutcome(
      executionId,
      "NOT_PAUSED",
      `execution ${executionId} is ${head.status}; only a paused execution can be approved`,
      calls(),
    );
  const pendingSeq = head.pendingSeq;
  const entry = pendingSeq === undefined ? undefined : log.get(pendingSeq);
  if (pendingSeq === undefined || !entry || entry.state !== "pending")
    return errorOutcome(executionId, "NOT_PAUSED", `execution ${executionId} has no pending action`, calls());
  if (input.seq !== undefined && input.seq !== pendingSeq) {
    // R-AP-7: a click on a stale screen must not approve something else.
    return errorOutcome(
      executionId,
      "NOT_PAUSED",
      `action ${String(input.seq)} is not pending; the pending action is seq ${pendingSeq} (${entry.connector}.${entry.method})`,
      calls(),
    );
  }
  const missing = missingConnectors(context, head, log);
  if (missing) return errorOutcome(executionId, missing.code, missing.message, calls());
  return undefined;
}
