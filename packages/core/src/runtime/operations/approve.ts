import { clipMessage } from "../../log/durable-value.js";
import { errorOutcome, type Outcome } from "../../outcome.js";
import type { RuntimeContext } from "../context/index.js";
import { approveAllPending, decide } from "./decide.js";

export interface ApproveInput {
  executionId: string;
  /** The action the person saw; refused (NOT_PAUSED) when it is not pending now (R-AP-7). Default: every pending action. */
  seq?: number;
  by?: string;
  reason?: string;
}

/**
 * Approves pending actions of a paused execution and resumes it (R-AP-2): the shorthand of
 * `decide` with "approve" for `seq`, or for every action pending when the lease is taken.
 * Anything stale comes back as an error outcome, never a throw (R-AP-3).
 */
export async function approve(context: RuntimeContext, input: ApproveInput): Promise<Outcome> {
  const executionId = typeof input?.executionId === "string" ? input.executionId : "";
  if (!executionId)
    return errorOutcome(String(input?.executionId ?? ""), "NOT_FOUND", "approve needs an executionId", { calls: [] });
  const audit = {
    ...(typeof input.by === "string" && input.by ? { by: clipMessage(input.by) } : {}),
    ...(typeof input.reason === "string" && input.reason ? { reason: clipMessage(input.reason) } : {}),
  };
  if (input.seq !== undefined)
    return decide(context, { executionId, ...audit, decisions: [{ seq: input.seq, decision: "approve" }] });
  return approveAllPending(context, executionId, audit);
}
