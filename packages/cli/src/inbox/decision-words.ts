import type { ApprovalDecision, ExecutionState, LogEntry, Outcome } from "@codemode/core";
import { explainStale } from "../explain.js";
import type { DecisionRequest } from "./decide-form.js";

/** What the page shows after a click: a notice, what the decided actions did, what still waits. */
export interface DecisionAnswer {
  ok: boolean;
  tone: "ok" | "warn" | "error";
  message: string;
  /** The run's status now, when known. */
  status?: string;
  /** True when someone (or something: expiry, rollback) decided first. */
  stale?: boolean;
  decision?: ApprovalDecision;
  code?: string;
  /** Each decided action as the log has it now: `applied` (it ran), `denied`, `error` (it ran and failed). */
  decided?: Array<{ seq: number; call: string; state: string; error?: string }>;
  /** The run's actions still waiting for a person. */
  pending?: Array<{ seq: number; call: string }>;
}

type Decide = Extract<DecisionRequest, { kind: "decide" }>;

const VERBS = { approve: "Approved", deny: "Denied", edit: "Edited" } as const;

/**
 * The answer to decisions the runtime applied: which ran (edited ones with the edited
 * arguments), which were denied or failed, and how the run stands — completed, still pending
 * at which actions, or ended.
 */
export function appliedAnswer(request: Decide, outcome: Outcome, log: readonly LogEntry[]): DecisionAnswer {
  const entries = new Map(log.map((entry) => [entry.seq, entry]));
  const decided = request.decisions.map(({ seq }) => {
    const entry = entries.get(seq);
    return {
      seq,
      call: entry ? `${entry.connector}.${entry.method}` : "?",
      state: entry?.state ?? "unknown",
      ...(entry?.state === "error" && entry.error ? { error: entry.error } : {}),
    };
  });
  const [first] = request.decisions;
  const seqs = request.decisions.map(({ seq }) => seq).join(", ");
  let what = `${VERBS[first?.decision ?? "approve"]} seq${request.decisions.length > 1 ? "s" : ""} ${seqs} of ${short(request.executionId)}`;
  if (first?.decision === "edit" && decided[0]?.state === "applied") what += " (it ran with the edited arguments)";
  if (first?.grant)
    what += `, with a grant: the next ${first.grant.calls} call${first.grant.calls === 1 ? "" : "s"} of ${decided[0]?.call} approved as they come`;
  const failed = decided.filter((each) => each.error !== undefined);
  const failures = failed.map((each) => ` Seq ${each.seq} (${each.call}) failed: ${each.error}.`).join("");
  const tone = failed.length > 0 ? "warn" : "ok";
  if (outcome.status === "completed")
    return {
      ok: true,
      tone,
      status: "completed",
      decided,
      pending: [],
      message: `${what}; the run completed.${failures}`,
    };
  if (outcome.status === "paused") {
    const pending = outcome.pending.map((action) => ({
      seq: action.seq,
      call: `${action.connector}.${action.method}`,
    }));
    const shown = pending.slice(0, 5).map((action) => `seq ${action.seq} (${action.call})`);
    const more = pending.length > 5 ? ` and ${pending.length - 5} more` : "";
    const message = `${what}; still pending: ${shown.join(", ")}${more}.${failures}`;
    return { ok: true, tone, status: "paused", decided, pending, message };
  }
  // R-AP-9: a denial the program did not catch ended the run, as rejecting it would have.
  if (outcome.code === "APPROVAL_DENIED")
    return {
      ok: true,
      tone: "warn",
      status: "rejected",
      decided,
      pending: [],
      message: `${what}; the run ended rejected: ${outcome.error.replace(/^execution \S+ was rejected: /, "")}.${failures}`,
    };
  return {
    ok: true,
    tone: "warn",
    status: "error",
    code: outcome.code,
    decided,
    pending: [],
    message: `${what}; then the run failed: ${outcome.code}: ${outcome.error}${failures}`,
  };
}

/** Someone decided first: say who and when, from the audit trail. */
export function staleAnswer(request: DecisionRequest, execution: ExecutionState | null): DecisionAnswer {
  const seqs = request.kind === "reject" ? [request.seq] : request.decisions.map(({ seq }) => seq);
  const kind = request.kind === "reject" ? "reject" : (request.decisions[0]?.decision ?? "approve");
  const notPending = seqs.find((seq) => execution?.log.find((entry) => entry.seq === seq)?.state !== "pending");
  const explained = explainStale(execution, request.executionId, notPending ?? seqs[0]);
  if (!explained.found) return notFound(request.executionId);
  const verb = { approve: "Not approved", deny: "Not denied", edit: "Not edited", reject: "Not rejected" }[kind];
  const none = seqs.length > 1 ? ` None of the ${seqs.length} actions was decided.` : "";
  // R-AP-9: still pending, but asked again since the page showed it (it was interrupted while it ran).
  const askedAgain = request.kind === "decide" ? askedAgainSince(request.decisions, execution) : undefined;
  if (notPending === undefined && askedAgain)
    return {
      ok: false,
      tone: "warn",
      stale: true,
      code: "NOT_PAUSED",
      message: `${verb}: in ${short(request.executionId)}, seq ${askedAgain.seq} (${askedAgain.connector}.${askedAgain.method}) was asked again after this page showed it: it was interrupted while it ran and may have taken effect. Decide it again as it is shown now.${none}`,
    };
  return {
    ok: false,
    tone: "warn",
    stale: true,
    code: "NOT_PAUSED",
    message: `${verb}: in ${short(request.executionId)}, ${explained.message}.${none}`,
    ...(explained.status ? { status: explained.status } : {}),
    ...(explained.decision ? { decision: explained.decision } : {}),
  };
}

/** The first decided action whose call waits in another pause than the one the page showed. */
function askedAgainSince(
  decisions: readonly { seq: number; pauseId?: string }[],
  execution: ExecutionState | null,
): { seq: number; connector: string; method: string } | undefined {
  for (const decision of decisions) {
    const entry = execution?.log.find((candidate) => candidate.seq === decision.seq);
    if (entry && decision.pauseId !== undefined && entry.pauseId !== undefined && entry.pauseId !== decision.pauseId)
      return entry;
  }
  return undefined;
}

export function notFound(executionId: string): DecisionAnswer {
  return {
    ok: false,
    tone: "error",
    code: "NOT_FOUND",
    message: `No execution ${executionId} in the store (deleted or pruned).`,
  };
}

export function busy(executionId: string): DecisionAnswer {
  return {
    ok: false,
    tone: "warn",
    code: "BUSY",
    message: `Someone else is deciding ${short(executionId)} right now; the page updates when they are done.`,
  };
}

export function short(executionId: string): string {
  return executionId.length > 12 ? executionId.slice(0, 8) : executionId;
}
