import { type ApprovalDecision, CodemodeError, type ErrorOutcome, type Outcome } from "@codemode/core";
import { errorMessage } from "@codemode/core/adapters";
import { explainStale } from "../explain.js";
import type { InboxQueue, InboxRuntime } from "./inbox-options.js";

export interface DecisionRequest {
  executionId: string;
  /** The call the person saw (R-AP-7: refused when another call is pending now). */
  seq: number;
  decision: "approve" | "reject";
  by: string;
  reason?: string;
}

/** What the page shows after a click: a notice, and for a stale click who decided and when. */
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
}

/**
 * Approves or rejects a pending call from the inbox — through the fleet's queue when there is
 * one (a worker runs the resumed pass), else through the runtime — and turns every way it can
 * fail into words for the person, never a silent no-op.
 */
export async function decide(
  runtime: InboxRuntime,
  queue: InboxQueue | undefined,
  request: DecisionRequest,
): Promise<DecisionAnswer> {
  const { executionId, seq, by, reason } = request;
  const input = { executionId, seq, by, ...(reason ? { reason } : {}) };
  try {
    if (request.decision === "reject") {
      const rejected = await (queue ?? runtime).reject(input);
      if (rejected)
        return {
          ok: true,
          tone: "ok",
          status: "rejected",
          message: `Rejected seq ${seq} of ${short(executionId)}; the run ended rejected.`,
        };
      return await stale(runtime, request);
    }
    if (queue) {
      const queued = await queue.approve(input);
      if ("status" in queued) return await refused(runtime, request, queued);
      return {
        ok: true,
        tone: "ok",
        status: "running",
        message: `Approved seq ${seq} of ${short(executionId)}; a worker resumes the run.`,
      };
    }
    const outcome = await runtime.approve(input);
    if (
      outcome.status === "error" &&
      ["NOT_PAUSED", "NOT_FOUND", "BUSY", "STORAGE_ERROR", "MISSING_CONNECTOR"].includes(outcome.code)
    )
      return await refused(runtime, request, outcome);
    return approved(request, outcome);
  } catch (error) {
    const code = CodemodeError.isInstance(error) ? error.code : undefined;
    if (code === "BUSY") return busy(executionId);
    return {
      ok: false,
      tone: "error",
      code: code ?? "STORAGE_ERROR",
      message: `Could not ${request.decision} ${short(executionId)}: ${errorMessage(error)}`,
    };
  }
}

function approved(request: DecisionRequest, outcome: Outcome): DecisionAnswer {
  const what = `Approved seq ${request.seq} of ${short(request.executionId)}`;
  if (outcome.status === "completed")
    return { ok: true, tone: "ok", status: "completed", message: `${what}; the run completed.` };
  if (outcome.status === "paused") {
    const next = outcome.pending[0];
    return {
      ok: true,
      tone: "ok",
      status: "paused",
      message: `${what}; the run paused again${next ? ` at seq ${next.seq} (${next.connector}.${next.method})` : ""}.`,
    };
  }
  return {
    ok: true,
    tone: "warn",
    status: "error",
    code: outcome.code,
    message: `${what}; then the run failed: ${outcome.code}: ${outcome.error}`,
  };
}

async function refused(
  runtime: InboxRuntime,
  request: DecisionRequest,
  outcome: ErrorOutcome,
): Promise<DecisionAnswer> {
  switch (outcome.code) {
    case "NOT_FOUND":
      return {
        ok: false,
        tone: "error",
        code: "NOT_FOUND",
        message: `No execution ${request.executionId} in the store (deleted or pruned).`,
      };
    case "BUSY":
      return busy(request.executionId);
    case "NOT_PAUSED":
      return stale(runtime, request);
    default:
      return {
        ok: false,
        tone: "error",
        code: outcome.code,
        message: `Could not approve ${short(request.executionId)}: ${outcome.code}: ${outcome.error}`,
      };
  }
}

/** Someone decided first: say who and when, from the audit trail. */
async function stale(runtime: InboxRuntime, request: DecisionRequest): Promise<DecisionAnswer> {
  const explained = explainStale(await runtime.execution(request.executionId), request.executionId, request.seq);
  if (!explained.found)
    return {
      ok: false,
      tone: "error",
      code: "NOT_FOUND",
      message: `No execution ${request.executionId} in the store (deleted or pruned).`,
    };
  const verb = request.decision === "approve" ? "Not approved" : "Not rejected";
  return {
    ok: false,
    tone: "warn",
    stale: true,
    code: "NOT_PAUSED",
    message: `${verb}: in ${short(request.executionId)}, ${explained.message}.`,
    ...(explained.status ? { status: explained.status } : {}),
    ...(explained.decision ? { decision: explained.decision } : {}),
  };
}

function busy(executionId: string): DecisionAnswer {
  return {
    ok: false,
    tone: "warn",
    code: "BUSY",
    message: `Someone else is deciding ${short(executionId)} right now; the page updates when they are done.`,
  };
}

function short(executionId: string): string {
  return executionId.length > 12 ? executionId.slice(0, 8) : executionId;
}
