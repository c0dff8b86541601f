import { errorMessage } from "../../error-message.js";
import { clipMessage } from "../../log/durable-value.js";
import type { PendingAction } from "../../outcome.js";

/** What a policy may answer for one call that requires approval (R-AP-10). */
export type PolicyDecision = "approve" | "deny" | "ask";

/** A policy's answer: a decision, or a decision with the reason recorded beside it. */
export type PolicyAnswer = PolicyDecision | { decision: PolicyDecision; reason?: string };

/** What a policy is told besides the action. */
export interface ApprovalPolicyContext {
  executionId: string;
  /** The runtime's `name`. */
  runtime: string;
  /** Aborted when the policy took longer than its bound (its answer then counts as "ask"). */
  signal: AbortSignal;
}

/**
 * Decides calls that require approval before they pause (R-AP-10): "approve" runs the call,
 * "deny" makes it reject inside the program, "ask" pauses it for a person. Its decisions are
 * recorded with `by: "policy"`. A policy that throws, answers anything else, or takes longer
 * than `APPROVAL_POLICY_TIMEOUT_MS` counts as "ask": a policy never lets a call through by failing.
 */
export type ApprovalPolicy = (
  action: Omit<PendingAction, "inputSchema">,
  context: ApprovalPolicyContext,
) => PolicyAnswer | Promise<PolicyAnswer>;

/** How long a policy may take for one call. */
export const APPROVAL_POLICY_TIMEOUT_MS = 5_000;

/** A policy's answer, checked: the decision and the reason to record with it. */
export interface PolicyVerdict {
  decision: PolicyDecision;
  reason?: string;
}

const DECISIONS: ReadonlySet<unknown> = new Set(["approve", "deny", "ask"]);

/**
 * Asks the policy about one action. Whatever goes wrong (a throw, a rejection, a malformed or
 * late answer) is "ask", with a warning that says why; the decision is never the policy's failure.
 */
export async function consultPolicy(
  policy: ApprovalPolicy,
  action: Omit<PendingAction, "inputSchema">,
  context: Omit<ApprovalPolicyContext, "signal">,
  warn: (message: string) => void,
  timeoutMs = APPROVAL_POLICY_TIMEOUT_MS,
): Promise<PolicyVerdict> {
  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const what = `the approval policy, for ${action.connector}.${action.method} (seq ${action.seq}) of execution ${action.executionId},`;
  try {
    const late = new Promise<"late">((resolve) => {
      timer = setTimeout(() => resolve("late"), timeoutMs);
    });
    const answer = await Promise.race([
      Promise.resolve().then(() => policy(action, { ...context, signal: controller.signal })),
      late,
    ]);
    if (answer === "late") {
      controller.abort(new Error(`the approval policy took longer than ${timeoutMs} ms`));
      warn(`${what} took longer than ${timeoutMs} ms: the action waits for a person`);
      return { decision: "ask" };
    }
    const verdict = readAnswer(answer);
    if (!verdict) warn(`${what} answered something other than approve, deny or ask: the action waits for a person`);
    return verdict ?? { decision: "ask" };
  } catch (error) {
    warn(`${what} threw (${errorMessage(error)}): the action waits for a person`);
    return { decision: "ask" };
  } finally {
    clearTimeout(timer);
  }
}

function readAnswer(answer: unknown): PolicyVerdict | undefined {
  if (DECISIONS.has(answer)) return { decision: answer as PolicyDecision };
  if (typeof answer !== "object" || answer === null) return undefined;
  const { decision, reason } = answer as { decision?: unknown; reason?: unknown };
  if (!DECISIONS.has(decision)) return undefined;
  return typeof reason === "string" && reason !== ""
    ? { decision: decision as PolicyDecision, reason: clipMessage(reason) }
    : { decision: decision as PolicyDecision };
}
