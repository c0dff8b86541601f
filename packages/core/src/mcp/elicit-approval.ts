import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { RequestId } from "@modelcontextprotocol/sdk/types.js";
import { chatMayDecide } from "../adapters/chat-decision.js";
import { type DecisionOutcome, decidePendingAction } from "../adapters/decide-pending-action.js";
import { describePendingAction } from "../adapters/pending-approval.js";
import { errorMessage } from "../error-message.js";
import type { CodemodeRuntime } from "../runtime/interface.js";

type DecidingRuntime = Pick<CodemodeRuntime, "approve" | "reject" | "execution" | "decide">;

export interface ElicitationContext {
  /** The `tools/call` request the questions belong to (Streamable HTTP sends them on its stream). */
  relatedRequestId: RequestId;
  /** Aborted when the client cancels the call: the question is withdrawn, the run stays paused. */
  signal: AbortSignal;
  /** How long one question waits for the person. */
  timeoutMs: number;
  /** Recorded as who decided (R-AP-7). */
  by: string;
}

/** How the questions ended: the outcome after the person's answers, and a note when they left it paused. */
export interface ElicitedOutcome {
  outcome: DecisionOutcome;
  /** Set when the run is still paused because nobody decided: why, said to the model before who can approve it. */
  stillPending?: string;
}

/** Whether the connected client takes `elicitation/create` in form mode. */
export function canElicit(server: Server): boolean {
  const elicitation = server.getClientCapabilities()?.elicitation;
  if (elicitation === undefined) return false;
  // An empty capability object means form mode (protocol versions before URL mode).
  return elicitation.form !== undefined || Object.keys(elicitation).length === 0;
}

const REQUESTED_SCHEMA = {
  type: "object" as const,
  properties: {
    reason: {
      type: "string" as const,
      title: "Reason",
      description: "Optional: why, kept in the audit log (and told to the model on a decline).",
    },
  },
};

/**
 * Asks the person at the client about each pending action of a paused run (beyond): accept
 * resumes it (`runtime.approve`), decline rejects it (`runtime.reject`), and a run that pauses
 * again is asked about again. A question that is cancelled, times out or fails leaves the run
 * paused for an operator — nothing is decided without an answer. An action the runtime does not
 * let a client decide (`chatApprovals`, the tool's `approvers: "operator"`, R-AP-11) is never
 * asked about: it waits for an operator.
 *
 * @example
 * const { outcome } = await askForApprovals(server, runtime, await runtime.execute({ code }), context);
 */
export async function askForApprovals(
  server: Server,
  runtime: DecidingRuntime,
  first: DecisionOutcome,
  context: ElicitationContext,
): Promise<ElicitedOutcome> {
  let outcome = first;
  while (outcome.status === "paused") {
    const action = outcome.pending[0];
    if (!action) break;
    if (!chatMayDecide(runtime, action))
      return { outcome, stillPending: "this action is reserved to an operator's approval." };
    let answer: Awaited<ReturnType<Server["elicitInput"]>>;
    try {
      answer = await server.elicitInput(
        {
          mode: "form",
          message: `Code Mode paused before ${describePendingAction(action)} (execution ${action.executionId}, call ${action.seq}). Accept to run it, decline to stop the program.`,
          requestedSchema: REQUESTED_SCHEMA,
        },
        { relatedRequestId: context.relatedRequestId, signal: context.signal, timeout: context.timeoutMs },
      );
    } catch (error) {
      const why = errorMessage(error);
      return { outcome, stillPending: `asking the person failed (${why}).` };
    }
    if (answer.action === "cancel")
      return { outcome, stillPending: "the person closed the approval request without deciding." };
    const given = answer.content?.reason;
    const reason = typeof given === "string" && given.trim() !== "" ? given.trim() : undefined;
    outcome = await decidePendingAction(runtime, {
      executionId: action.executionId,
      seq: action.seq,
      approved: answer.action === "accept",
      by: context.by,
      ...(reason ? { reason } : answer.action === "decline" ? { reason: "declined when asked" } : {}),
    });
  }
  return { outcome };
}
