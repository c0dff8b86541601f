import { errorMessage } from "../../error-message.js";
import { encodeDurable } from "../../log/durable-value.js";
import type { ExecutionHead, StoredEntry } from "../../log/interface.js";
import { pauseIdOf } from "../../log/pause-id.js";
import { type ApprovalDecision, CodemodeError, type ErrorOutcome, errorOutcome, type Outcome } from "../../outcome.js";
import type { RuntimeContext } from "../context/index.js";
import { denialMessage, passTools, protoKeyMessage, protoKeyPath } from "../passes/index.js";
import { pendingSeqsOf, toLogEntries } from "../records/index.js";
import { missingConnectors, resume } from "../transitions/index.js";
import { handOver } from "./control-step.js";
import {
  type Checked,
  type CheckedDecisions,
  checkDecisions,
  type DecideInput,
  type Decision,
} from "./decide-input.js";

export type { DecideInput, Decision } from "./decide-input.js";

/**
 * Decides pending calls of a paused execution and resumes it (R-AP-9): approve runs a call, edit
 * runs it with other arguments (checked by the tool's schema), deny makes it reject inside the
 * program with an `ApprovalDenied` error, and a grant approves further calls of the same method.
 * Decisions may cover some of the pending calls: the others stay pending. Everything is checked
 * under the execution's lease before anything is written, so a refusal (NOT_PAUSED for a seq not
 * pending now, INVALID_DECISION for a malformed decision or arguments the tool refuses) changes
 * nothing, and of two people deciding at once exactly one decision applies (R-AP-6).
 */
export async function decide(context: RuntimeContext, input: DecideInput): Promise<Outcome> {
  const executionId = typeof input?.executionId === "string" ? input.executionId : "";
  if (!executionId)
    return errorOutcome(String(input?.executionId ?? ""), "NOT_FOUND", "decide needs an executionId", { calls: [] });
  const checked = checkDecisions(input);
  if (!checked.ok) return errorOutcome(executionId, "INVALID_DECISION", checked.problem, { calls: [] });
  const { value } = checked;
  return applyDecisions(context, executionId, value, () => value.decisions, "decided");
}

/**
 * `approve` without a seq: every action pending when the lease is taken is approved, so that of
 * an approval and another operation racing, the first to take the lease wins (R-AP-6).
 */
export function approveAllPending(
  context: RuntimeContext,
  executionId: string,
  audit: Omit<CheckedDecisions, "decisions">,
): Promise<Outcome> {
  const pendingNow = (head: ExecutionHead, log: Map<number, StoredEntry>): Decision[] =>
    pendingSeqsOf(head)
      .filter((seq) => log.get(seq)?.state === "pending")
      .map((seq) => ({ seq, decision: "approve" }));
  return applyDecisions(context, executionId, { ...audit, decisions: [] }, pendingNow, "approved");
}

/** Under the lease: reads the run, chooses the decisions, checks them all, then writes and resumes. */
function applyDecisions(
  context: RuntimeContext,
  executionId: string,
  checked: CheckedDecisions,
  choose: (head: ExecutionHead, log: Map<number, StoredEntry>) => Decision[],
  verb: string,
): Promise<Outcome> {
  return handOver(context, executionId, {}, async (lease, start) => {
    const head = await context.store.readHead(executionId);
    if (!head) return errorOutcome(executionId, "NOT_FOUND", `no execution ${executionId}`, { calls: [] });
    const { code, log } = await context.store.readCodeAndLog(head);
    const decisions = choose(head, log);
    const refused = checkDecidable(context, head, log, decisions, verb);
    if (refused) return refused;
    // Its sandbox host may read the program while the decisions are written.
    context.executor.anticipate?.(code);
    const decided: StoredEntry[] = [];
    for (const decision of decisions) {
      const entry = await decidedEntry(context, log.get(decision.seq) as StoredEntry, decision, checked);
      if (!entry.ok) return errorOutcome(executionId, "INVALID_DECISION", entry.problem, { calls: toLogEntries(log) });
      decided.push(entry.value);
    }
    for (const entry of decided) log.set(entry.seq, entry);
    await resume(context, lease, head, decided);
    return start({ head, code, log });
  });
}

/** Why these decisions must change nothing, or undefined when they may go ahead. */
function checkDecidable(
  context: RuntimeContext,
  head: ExecutionHead,
  log: Map<number, StoredEntry>,
  decisions: readonly Decision[],
  verb: string,
): ErrorOutcome | undefined {
  const executionId = head.id;
  const calls = () => ({ calls: toLogEntries(log) });
  // R-AP-3: a stale decision must never revive a finished or running execution.
  if (head.status !== "paused")
    return errorOutcome(
      executionId,
      "NOT_PAUSED",
      `execution ${executionId} is ${head.status}; only a paused execution can be ${verb}`,
      calls(),
    );
  const pending = pendingSeqsOf(head).filter((seq) => log.get(seq)?.state === "pending");
  if (pending.length === 0 || decisions.length === 0)
    return errorOutcome(executionId, "NOT_PAUSED", `execution ${executionId} has no pending action`, calls());
  const pendingSet = new Set(pending);
  const stale = decisions.find((decision) => !pendingSet.has(decision.seq));
  if (stale) {
    // R-AP-7: a click on a stale screen must not decide something else.
    const now = pending
      .slice(0, 10)
      .map((seq) => `seq ${seq} (${log.get(seq)?.connector}.${log.get(seq)?.method})`)
      .join(", ");
    return errorOutcome(
      executionId,
      "NOT_PAUSED",
      `action ${stale.seq} is not pending; pending now: ${now}${pending.length > 10 ? ", …" : ""}`,
      calls(),
    );
  }
  // R-AP-9: every answer answers one pause: one for a pause the call has left (it was asked again) decides nothing.
  const earlier = decisions.find(
    (decision) =>
      decision.pauseId !== undefined && decision.pauseId !== pauseIdOf(log.get(decision.seq) as StoredEntry),
  );
  if (earlier) {
    const entry = log.get(earlier.seq) as StoredEntry;
    return errorOutcome(
      executionId,
      "NOT_PAUSED",
      `seq ${earlier.seq} (${entry.connector}.${entry.method}) was asked again since this answer was given (it answers pause ${earlier.pauseId}; the call now waits in pause ${pauseIdOf(entry)}): nothing was decided; decide it again as it is asked now`,
      calls(),
    );
  }
  const missing = missingConnectors(context, head, log);
  if (missing) return errorOutcome(executionId, missing.code, missing.message, calls());
  return undefined;
}

/** The entry as the decision leaves it, or why the decision is refused (INVALID_DECISION). */
async function decidedEntry(
  context: RuntimeContext,
  entry: StoredEntry,
  decision: Decision,
  checked: CheckedDecisions,
): Promise<Checked<StoredEntry>> {
  const at = Date.now();
  const reason = decision.reason ?? checked.reason;
  const record: ApprovalDecision = {
    approved: decision.decision !== "deny",
    decision: decision.decision,
    at,
    ...(checked.by ? { by: checked.by } : {}),
    ...(reason ? { reason } : {}),
    ...(decision.grant ? { grant: { calls: decision.grant.calls } } : {}),
  };
  if (decision.decision === "approve") return { ok: true, value: { ...entry, decision: record } };
  if (decision.decision === "deny") {
    const error = denialMessage(entry, record);
    return { ok: true, value: { ...entry, state: "denied", error, decision: record, endedAt: at } };
  }
  // A call left under way and asked again (`onInterrupted: "ask"`) may have taken effect with its
  // arguments under its idempotency key: running other arguments under the same key is refused.
  const call = `seq ${entry.seq} (${entry.connector}.${entry.method})`;
  if (entry.interrupted)
    return {
      ok: false,
      problem: `${call} was interrupted while it ran and may have taken effect: approve or deny it, do not edit it`,
    };
  const args = await editedArgs(context, entry, decision.args);
  if (!args.ok) return { ok: false, problem: `${call}: ${args.problem}` };
  return {
    ok: true,
    value: {
      ...entry,
      args: args.value,
      // What the program asked for stays with the entry: its replays match it (R-AP-9).
      requestedArgs: typeof entry.requestedArgs === "string" ? entry.requestedArgs : entry.args,
      decision: record,
    },
  };
}

/**
 * Edited arguments as wire text, checked as the program's own are (R-CON-2): they must be
 * serializable, within the durable size, without a `__proto__` key, and accepted by the tool's
 * schema. The approval rule is not asked again: a person decided.
 */
async function editedArgs(context: RuntimeContext, entry: StoredEntry, args: unknown): Promise<Checked<string>> {
  const { connector, method } = entry;
  const tool = passTools(context)(connector, method);
  if (!tool) return { ok: false, problem: `${connector}.${method} is not a configured tool` };
  let text: string;
  try {
    text = encodeDurable(args, `the edited arguments of ${connector}.${method}`);
  } catch (error) {
    return { ok: false, problem: CodemodeError.isInstance(error) ? error.message : errorMessage(error) };
  }
  const protoKey = protoKeyPath(text, args);
  if (protoKey !== undefined) return { ok: false, problem: protoKeyMessage(connector, method, protoKey) };
  const validator = context.validators.get(`${connector}.${method}`);
  if (!validator) return { ok: true, value: text };
  try {
    const validation = await validator(args);
    return validation.ok ? { ok: true, value: text } : { ok: false, problem: validation.message };
  } catch (error) {
    return { ok: false, problem: `could not check the edited arguments: ${errorMessage(error)}` };
  }
}
