import { CodemodeError, type ErrorOutcome, type Outcome } from "@codemode/core";
import { errorMessage } from "@codemode/core/adapters";
import type { DecisionRequest } from "./decide-form.js";
import { appliedAnswer, busy, type DecisionAnswer, notFound, short, staleAnswer } from "./decision-words.js";
import type { InboxQueue, InboxRuntime } from "./inbox-options.js";

export type { DecisionAnswer } from "./decision-words.js";

type Decide = Extract<DecisionRequest, { kind: "decide" }>;

/** Refusals: nothing was decided (as opposed to a run that failed after the decision). */
const REFUSALS = new Set(["NOT_FOUND", "BUSY", "STORAGE_ERROR", "MISSING_CONNECTOR", "INVALID_DECISION"]);

/**
 * Makes the decisions of one form (R-AP-9) and turns every way it can go into words for the
 * person, never a silent no-op. With a fleet queue, a plain approval of one action goes to the
 * queue (a worker runs the resumed pass), as before; what the queue cannot carry — a denial, an
 * edit, a grant, several actions at once — is decided with `runtime.decide` here, whose
 * resumed pass runs in this process. `reject` ends the run through the queue or the runtime.
 */
export async function decide(
  runtime: InboxRuntime,
  queue: InboxQueue | undefined,
  request: DecisionRequest,
): Promise<DecisionAnswer> {
  const { executionId } = request;
  try {
    if (request.kind === "reject") return await reject(runtime, queue, request);
    const [only] = request.decisions;
    if (queue && only && request.decisions.length === 1 && only.decision === "approve" && !only.grant) {
      const answer = await queued(runtime, queue, request, only.seq);
      if (answer) return answer;
    }
    const outcome = await runtime.decide({
      executionId,
      decisions: request.decisions,
      by: request.by,
      ...(request.reason ? { reason: request.reason } : {}),
    });
    return await answerOf(runtime, request, outcome);
  } catch (error) {
    const code = CodemodeError.isInstance(error) ? error.code : undefined;
    if (code === "BUSY") return busy(executionId);
    return {
      ok: false,
      tone: "error",
      code: code ?? "STORAGE_ERROR",
      message: `Could not decide on ${short(executionId)}: ${errorMessage(error)}`,
    };
  }
}

async function answerOf(runtime: InboxRuntime, request: Decide, outcome: Outcome) {
  if (outcome.status !== "error") return appliedAnswer(request, outcome, outcome.calls ?? []);
  if (REFUSALS.has(outcome.code)) return refusal(request, outcome);
  if (outcome.code !== "NOT_PAUSED") return appliedAnswer(request, outcome, outcome.calls ?? []);
  // NOT_PAUSED from decide is always a refusal (a run a denial ended answers APPROVAL_DENIED): a stale click.
  const execution = await runtime.execution(request.executionId);
  if (!execution) return notFound(request.executionId);
  return staleAnswer(request, execution);
}

function refusal(request: Decide, outcome: ErrorOutcome): DecisionAnswer {
  if (outcome.code === "NOT_FOUND") return notFound(request.executionId);
  if (outcome.code === "BUSY") return busy(request.executionId);
  if (outcome.code === "INVALID_DECISION")
    return {
      ok: false,
      tone: "error",
      code: "INVALID_DECISION",
      message: `Refused, nothing ran: ${outcome.error}`,
    };
  return {
    ok: false,
    tone: "error",
    code: outcome.code,
    message: `Could not decide on ${short(request.executionId)}: ${outcome.code}: ${outcome.error}`,
  };
}

/** A plain approval queued for the fleet's workers; undefined when the queue cannot take this one. */
async function queued(
  runtime: InboxRuntime,
  queue: InboxQueue,
  request: Decide,
  seq: number,
): Promise<DecisionAnswer | undefined> {
  const { executionId, by, reason } = request;
  const answer = await queue.approve({ executionId, seq, by, ...(reason ? { reason } : {}) });
  if (!("status" in answer))
    return {
      ok: true,
      tone: "ok",
      status: "running",
      message: `Approved seq ${seq} of ${short(executionId)}; a worker resumes the run.`,
    };
  if (answer.code !== "NOT_PAUSED") return refusal(request, answer);
  const execution = await runtime.execution(executionId);
  // A seq the queue refused as not pending, that the log shows pending now (the run paused again
  // at it meanwhile): decided here rather than reported stale.
  if (execution?.log.some((entry) => entry.seq === seq && entry.state === "pending")) return undefined;
  return staleAnswer(request, execution);
}

async function reject(
  runtime: InboxRuntime,
  queue: InboxQueue | undefined,
  request: Extract<DecisionRequest, { kind: "reject" }>,
): Promise<DecisionAnswer> {
  const { executionId, seq, by, reason } = request;
  const rejected = await (queue ?? runtime).reject({ executionId, seq, by, ...(reason ? { reason } : {}) });
  if (!rejected) return staleAnswer(request, await runtime.execution(executionId));
  return {
    ok: true,
    tone: "ok",
    status: "rejected",
    message: `Rejected seq ${seq} of ${short(executionId)}; the run ended rejected.`,
  };
}
