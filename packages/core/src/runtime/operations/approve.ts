import { errorOutcome, type Outcome } from "../../outcome.js";
import type { RuntimeContext } from "../context.js";
import { failureOutcome } from "../failure.js";
import { pendingSeqsOf, toLogEntries } from "../log-view.js";
import { decide } from "./decide.js";

export interface ApproveInput {
  executionId: string;
  /** The action the person saw; refused (NOT_PAUSED) when it is not pending now (R-AP-7). Default: every pending action. */
  seq?: number;
  by?: string;
  reason?: string;
}

/**
 * Approves pending actions of a paused execution and resumes it (R-AP-2): the shorthand of
 * `decide` with "approve" for `seq`, or for every action pending now. Anything stale comes back
 * as an error outcome, never a throw (R-AP-3).
 */
export async function approve(context: RuntimeContext, input: ApproveInput): Promise<Outcome> {
  const executionId = typeof input?.executionId === "string" ? input.executionId : "";
  if (!executionId)
    return errorOutcome(String(input?.executionId ?? ""), "NOT_FOUND", "approve needs an executionId", { calls: [] });
  const base = {
    executionId,
    ...(typeof input.by === "string" ? { by: input.by } : {}),
    ...(typeof input.reason === "string" ? { reason: input.reason } : {}),
  };
  if (input.seq !== undefined)
    return decide(context, { ...base, decisions: [{ seq: input.seq, decision: "approve" }] });
  let seqs: number[];
  try {
    const head = await context.store.readHead(executionId);
    if (!head) return errorOutcome(executionId, "NOT_FOUND", `no execution ${executionId}`, { calls: [] });
    seqs = pendingSeqsOf(head);
    if (head.status !== "paused" || seqs.length === 0) {
      const { log } = await context.store.readCodeAndLog(head);
      return errorOutcome(
        executionId,
        "NOT_PAUSED",
        `execution ${executionId} is ${head.status}; only a paused execution can be approved`,
        { calls: toLogEntries(log) },
      );
    }
  } catch (error) {
    return failureOutcome(executionId, error, []);
  }
  // Read before the lease: decide checks again under it, and refuses seqs no longer pending.
  return decide(context, { ...base, decisions: seqs.map((seq) => ({ seq, decision: "approve" as const })) });
}
