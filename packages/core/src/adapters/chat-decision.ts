import { type ErrorOutcome, errorOutcome, type PendingAction } from "../outcome.js";
import { approvalAuthorityOf, type ChatClaim, claimedSeqs } from "../runtime/approvals/index.js";
import type { CodemodeRuntime } from "../runtime/handle/index.js";
import { referenceProblem } from "./pause-state.js";

/**
 * The server's signature for an approval request it issues to a chat (R-AP-11): over the
 * execution id, the set of seqs the request shows (`seqs`, or the one `seq`), the tool call that
 * shows it and the code that call ran, with the runtime's `approvalSecret`. An answer to the
 * request then decides exactly those actions: a set altered in the browser no longer matches.
 * Put it in the request with `pauseApprovalReason`, which says which actions it covers.
 * Undefined for a runtime `createCodemodeRuntime` did not make.
 *
 * @example
 * const reason = pauseApprovalReason(outcome, {
 *   seqs: outcome.pending.filter((action) => chatMayDecide(runtime, action)).map((action) => action.seq),
 *   signature: ({ seq, seqs }) => signPauseApproval(runtime, { executionId, toolCallId, seq, seqs }, code),
 * });
 */
export function signPauseApproval(runtime: object, claim: ChatClaim, code: string): string | undefined {
  const authority = approvalAuthorityOf(runtime);
  // Offering a chat an approval: without an approvalSecret, say once that other processes refuse its answers.
  authority?.offeredToChat();
  return authority?.sign(claim, code);
}

/**
 * Whether `signature` is this runtime's `signPauseApproval` of `claim` and `code` (with its
 * `approvalSecret`, or the secret of this process when it has none). False for a runtime
 * `createCodemodeRuntime` did not make.
 */
export function verifyPauseApproval(runtime: object, claim: ChatClaim, code: string, signature: string): boolean {
  return approvalAuthorityOf(runtime)?.verify(claim, code, signature) ?? false;
}

/**
 * Whether a chat may approve or deny `action` in this runtime: its `chatApprovals` choice and the
 * tool's `approvers`. An adapter asks before it offers a chat the decision at all.
 */
export function chatMayDecide(
  runtime: object,
  action: Pick<PendingAction, "executionId" | "seq" | "connector" | "method" | "args">,
): boolean {
  return approvalAuthorityOf(runtime)?.chatMayDecide(action) ?? false;
}

/**
 * Checks a decision that came from a chat (the browser sends the conversation, answers included,
 * so everything in it is a claim) before anything is decided or run (R-AP-11):
 *
 * 1. the server signed this approval request, with exactly this set of seqs, for this very tool
 *    call and code (`signPauseApproval`);
 * 2. the execution exists for this runtime and runs exactly `code` (`checkPauseReference`);
 * 3. the runtime lets a chat decide every action of the set that is pending now (`chatApprovals`,
 *    the tool's `approvers`).
 *
 * Undefined when all hold (an action no longer pending is left to the decision, which answers
 * NOT_PAUSED and decides nothing); otherwise the refusal, as an error outcome that says which
 * check failed and what to do: NOT_FOUND for an unsigned or altered request, NOT_PAUSED for an
 * action a chat may not decide. `doing` names what did not happen ("nothing was approved"). A
 * store failure rejects with `CodemodeError` STORAGE_ERROR (R-RT-3).
 *
 * @example
 * const refused = await checkChatDecision(runtime, { executionId, seq, toolCallId, signature }, code, "nothing was approved");
 * if (refused) return refused;
 */
export async function checkChatDecision(
  runtime: Pick<CodemodeRuntime, "execution">,
  claim: ChatClaim & { signature?: string | undefined },
  code: unknown,
  doing: string,
): Promise<ErrorOutcome | undefined> {
  const refused = await chatDecisionProblem(runtime, claim, code, doing);
  // An operator sees every refusal in the runtime's log, not only the model in its next turn.
  if (refused) approvalAuthorityOf(runtime)?.refused(refused.error);
  return refused;
}

async function chatDecisionProblem(
  runtime: Pick<CodemodeRuntime, "execution">,
  claim: ChatClaim & { signature?: string | undefined },
  code: unknown,
  doing: string,
): Promise<ErrorOutcome | undefined> {
  const { executionId } = claim;
  const seqs = claimedSeqs(claim);
  const authority = approvalAuthorityOf(runtime);
  if (!authority)
    return errorOutcome(
      executionId,
      "NOT_FOUND",
      `this runtime object was not made by createCodemodeRuntime, so it cannot check who issued the approval of execution ${executionId}, and ${doing}`,
      {
        calls: [],
      },
    );
  if (
    typeof code !== "string" ||
    typeof claim.signature !== "string" ||
    !authority.verify(claim, code, claim.signature)
  ) {
    return errorOutcome(
      executionId,
      "NOT_FOUND",
      `the approval of execution ${executionId} seq ${seqs.join(",")} was not issued by this server to tool call ${claim.toolCallId} (its signature is missing or does not match the actions, the call and its code), so ${doing}. A chat decides only approval requests the server signed for it; an operator decides with runtime.decide (or an inbox). If several processes or runtimes serve this chat, give them the same approvalSecret.`,
      { calls: [] },
    );
  }
  const execution = await runtime.execution(executionId);
  const problem = referenceProblem(execution, claim, code, doing);
  if (problem || !execution) return problem;
  // Every claimed action is checked whatever the run's state when read: the decision itself comes
  // later, under the lease, and a run that is running now may be paused again at these seqs by then.
  for (const [index, seq] of seqs.entries()) {
    const entry = execution.log.find((candidate) => candidate.seq === seq);
    // An action not in the log is left to the decision, which answers NOT_PAUSED for it.
    if (!entry) continue;
    // R-AP-9: the answer is for the pause the request showed; a request written before pause ids
    // showed the first. A call asked again since (it was interrupted) is not decided by it.
    const answered = claim.pauses?.[index] ?? `${seq}.1`;
    if (entry.state === "pending" && entry.pauseId !== undefined && entry.pauseId !== answered)
      return errorOutcome(
        executionId,
        "NOT_PAUSED",
        `${entry.connector}.${entry.method} (seq ${seq} of execution ${executionId}) was asked again after this approval request was answered (the answer is for pause ${answered}; it now waits in pause ${entry.pauseId}), so ${doing}: answer it as it is asked now.`,
        { calls: [] },
      );
    const action = { executionId, seq, connector: entry.connector, method: entry.method, args: entry.args };
    if (authority.chatMayDecide(action)) continue;
    return errorOutcome(
      executionId,
      "NOT_PAUSED",
      `${entry.connector}.${entry.method} (seq ${seq} of execution ${executionId}) waits for an operator's decision: this application does not let a chat approve or deny it, so ${doing}.`,
      { calls: [] },
    );
  }
  return undefined;
}
