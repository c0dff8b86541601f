import { type ErrorOutcome, type ExecutionState, errorOutcome, type Outcome } from "../outcome.js";
import { claimedSeqs } from "../runtime/approvals/index.js";
import type { CodemodeRuntime } from "../runtime/handle/index.js";
import type { DecisionOutcome, RejectedOutcome } from "./decide-pending-action.js";
import type { PauseReference } from "./pending-approval.js";

/**
 * Where a pause that a conversation shows stands now, in the runtime's store:
 * - `waiting`: the execution is still paused with every action the reference names pending
 *   (`outcome` says so, with whatever else is pending); nothing was decided on them;
 * - `decided`: someone decided elsewhere (an inbox, another process, `runtime.decide`) on one or
 *   more of them: the outcome is how the run went on (completed, failed, paused at other actions,
 *   still running: BUSY) or, when it ended on a rejection or an uncaught denial, a `rejected`
 *   outcome with the human's reason;
 * - `missing`: this runtime cannot show that execution (see `checkPauseReference`): NOT_FOUND.
 */
export type PauseState =
  | { state: "waiting"; outcome: Extract<Outcome, { status: "paused" }> }
  | { state: "decided"; outcome: DecisionOutcome }
  | { state: "missing"; outcome: ErrorOutcome };

type ReadingRuntime = Pick<CodemodeRuntime, "execution" | "outcome">;

/**
 * Checks a pause reference that came back through a client (an approval request's reason, a tool
 * result in a conversation the browser sent) before anything is read or decided for it: the
 * execution must exist for this runtime and run exactly `code`, the code of the tool call that
 * carries the reference. Undefined when it does; otherwise the NOT_FOUND outcome saying which of
 * the two it is and what to do. `doing` names what did not happen ("nothing was approved").
 * A store failure rejects with `CodemodeError` STORAGE_ERROR (R-RT-3), never NOT_FOUND.
 *
 * @example
 * const refused = await checkPauseReference(runtime, reference, toolCall.input.code, "nothing was approved");
 * if (refused) return refused;
 */
export async function checkPauseReference(
  runtime: Pick<CodemodeRuntime, "execution">,
  reference: PauseReference,
  code: unknown,
  doing: string,
): Promise<ErrorOutcome | undefined> {
  return referenceProblem(await runtime.execution(reference.executionId), reference, code, doing);
}

/** `checkPauseReference` on an execution already read (null when there is none). */
export function referenceProblem(
  execution: Pick<ExecutionState, "code"> | null,
  reference: Pick<PauseReference, "executionId">,
  code: unknown,
  doing: string,
): ErrorOutcome | undefined {
  const { executionId } = reference;
  if (!execution) {
    // The usual cause is a runtime with another `name` (or storage): its history is separate.
    return errorOutcome(
      executionId,
      "NOT_FOUND",
      `execution ${executionId} is not in this runtime's store, so ${doing}. A runtime sees only the executions of its own \`name\` and \`storage\`: use a runtime created with the same name and storage as the one that ran the code (or the execution was deleted or pruned since).`,
      { calls: [] },
    );
  }
  if (typeof code !== "string" || execution.code !== code) {
    return errorOutcome(
      executionId,
      "NOT_FOUND",
      `the approval names execution ${executionId}, which runs other code than this tool call, so ${doing}: the approval request was altered or belongs to another conversation.`,
      { calls: [] },
    );
  }
  return undefined;
}

/**
 * Where the pause `reference` stands now (see `PauseState`), for adapters that bring decisions
 * made outside a conversation into it (AI SDK `syncApprovals`). Pass the tool call's `code` to
 * check the reference first (`checkPauseReference`). Reads the store: a failure rejects with
 * `CodemodeError` STORAGE_ERROR.
 *
 * @example
 * const now = await pauseState(runtime, { executionId, seq }, { code });
 * if (now.state === "decided") showToModel(modelFacingDecision(now.outcome));
 */
export async function pauseState(
  runtime: ReadingRuntime,
  reference: PauseReference,
  options: { code?: unknown } = {},
): Promise<PauseState> {
  if ("code" in options) {
    const refused = await checkPauseReference(runtime, reference, options.code, "its outcome cannot be shown");
    if (refused) return { state: "missing", outcome: refused };
  }
  const { executionId } = reference;
  const outcome = await runtime.outcome(executionId);
  if (!outcome) {
    return {
      state: "missing",
      outcome: errorOutcome(
        executionId,
        "NOT_FOUND",
        `execution ${executionId} is not in this runtime's store (another runtime \`name\` or \`storage\`, or deleted since)`,
        { calls: [] },
      ),
    };
  }
  if (outcome.status === "paused") {
    // Waiting only while every action shown waits: one decided elsewhere makes the request stale.
    const pendingNow = new Set(outcome.pending.map((action) => action.seq));
    if (claimedSeqs(reference).every((seq) => pendingNow.has(seq))) return { state: "waiting", outcome };
  }
  if (outcome.status === "error" && (outcome.code === "NOT_PAUSED" || outcome.code === "APPROVAL_DENIED"))
    return { state: "decided", outcome: asRejection(outcome) ?? outcome };
  return { state: "decided", outcome };
}

/**
 * A run ended by a rejection (R-AP-4) or an uncaught denial (R-AP-9), as the `rejected` outcome
 * adapters show; undefined otherwise. Of several denied actions, the one the run ended on (its
 * message is the outcome's) — a denial the program caught came before it.
 */
function asRejection(outcome: ErrorOutcome): RejectedOutcome | undefined {
  const calls = outcome.calls ?? [];
  const denied = calls.filter((call) => call.decision?.approved === false);
  const entry =
    denied.findLast((call) => typeof call.error === "string" && outcome.error.endsWith(call.error)) ?? denied[0];
  if (!entry) return undefined;
  const { executionId } = outcome;
  const reason = entry.decision?.reason;
  return {
    status: "rejected",
    executionId,
    rejected: { executionId, seq: entry.seq, connector: entry.connector, method: entry.method, args: entry.args },
    ...(reason ? { reason } : {}),
    calls,
  };
}
