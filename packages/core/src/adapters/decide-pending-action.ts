import { pauseIdOf } from "../log/pause-id.js";
import {
  CodemodeError,
  type DecisionKind,
  errorOutcome,
  type LogEntry,
  type Outcome,
  type PendingAction,
} from "../outcome.js";
import type { CodemodeRuntime } from "../runtime/handle/index.js";
import type { Decision } from "../runtime/operations/index.js";
import { type ModelFacingOutcome, type ModelOutputOptions, modelFacingOutcome } from "./model-output.js";

/** A human's answer to one pending action. */
export interface PendingDecision {
  executionId: string;
  /** The pending action's seq: a decision never lands on another action (R-AP-7). */
  seq: number;
  /**
   * Without `decision`: true approves; false rejects the action and ends the run (`runtime.reject`).
   * With `decision`, it is ignored.
   */
  approved?: boolean;
  /**
   * What was decided (R-AP-9): "deny" makes the call reject inside the program with an
   * `ApprovalDenied` error (the program may catch it), "edit" runs it with `args`.
   */
  decision?: DecisionKind;
  /** For "edit": the arguments that run instead (checked by the tool's schema). */
  args?: unknown;
  /** On "approve" or "edit": approve up to `calls` further calls of the same method. */
  grant?: { calls: number };
  /** Who decided, for the audit trail. */
  by?: string;
  /** Why; for a rejection the model is told it. */
  reason?: string;
}

/** How a rejected execution ends, as data: `reject` itself only answers true or false. */
export interface RejectedOutcome {
  status: "rejected";
  executionId: string;
  /** The action the human rejected; it did not run. */
  rejected: PendingAction;
  reason?: string;
  calls?: LogEntry[];
}

/** What follows a decision: the outcome of the resumed run, or the rejection. */
export type DecisionOutcome = Outcome | RejectedOutcome;

/** A rejection as a model should see it. */
export interface ModelFacingRejection {
  status: "rejected";
  executionId: string;
  rejected: { seq: number; connector: string; method: string; args: unknown };
  reason?: string;
  message: string;
}

type DecidingRuntime = Pick<CodemodeRuntime, "approve" | "reject" | "execution" | "decide">;

/**
 * Applies a human's decision to a pending action and says what followed: `approve`'s outcome, or a
 * `rejected` outcome. For framework loops that re-run their step after a resume (LangGraph's
 * `interrupt`, workflow engines), a decision that was already applied is answered from the log
 * instead of failing with NOT_PAUSED: the outcome is the next approval-gated action after it
 * (decided or not) or, when there is none, how the execution ended. A re-run therefore walks the
 * same decisions again without running anything twice.
 *
 * A completed run answered from the log carries the recorded result, before `transformResult`.
 *
 * @example
 * let outcome: DecisionOutcome = await runtime.execute({ code });
 * while (outcome.status === "paused") {
 *   const action = outcome.pending[0]!;
 *   outcome = await decidePendingAction(runtime, { executionId: action.executionId, seq: action.seq, approved: await ask(action) });
 * }
 */
export async function decidePendingAction(
  runtime: DecidingRuntime,
  decision: PendingDecision,
): Promise<DecisionOutcome> {
  try {
    return await decide(runtime, decision);
  } catch (error) {
    // R-RT-3: a store that failed (or an execution that stayed busy) is tool-result data with its
    // code, never a throw into the framework's loop and never "not pending".
    if (CodemodeError.isInstance(error))
      return errorOutcome(decision.executionId, error.code, error.message, { calls: [] });
    throw error;
  }
}

async function decide(runtime: DecidingRuntime, decision: PendingDecision): Promise<DecisionOutcome> {
  const { executionId, seq } = decision;
  const approved = decision.decision ? decision.decision !== "deny" : decision.approved === true;
  const audit = {
    ...(decision.by ? { by: decision.by } : {}),
    ...(decision.reason ? { reason: decision.reason } : {}),
  };
  if (decision.decision) {
    const one: Decision = { seq, decision: decision.decision };
    if (decision.decision === "edit") one.args = decision.args;
    if (decision.grant && decision.decision !== "deny") one.grant = decision.grant;
    const outcome = await runtime.decide({ executionId, decisions: [one], ...audit });
    if (outcome.status !== "error" || outcome.code !== "NOT_PAUSED") return outcome;
    return (await answerFromLog(runtime, executionId, seq, approved)) ?? outcome;
  }
  if (approved) {
    const outcome = await runtime.approve({ executionId, seq, ...audit });
    if (outcome.status !== "error" || outcome.code !== "NOT_PAUSED") return outcome;
    return (await answerFromLog(runtime, executionId, seq, true)) ?? outcome;
  }
  if (await runtime.reject({ executionId, seq, ...audit })) {
    const state = await runtime.execution(executionId);
    const entry = state?.log.find((call) => call.seq === seq);
    if (state && entry) return rejectedOutcome(executionId, entry, state.log);
  }
  return (
    (await answerFromLog(runtime, executionId, seq, false)) ??
    errorOutcome(
      executionId,
      "NOT_PAUSED",
      `action ${seq} of execution ${executionId} is not pending; it cannot be rejected`,
      { calls: (await runtime.execution(executionId))?.log ?? [] },
    )
  );
}

/** Decisions on several pending actions of one execution, as `runtime.decide` takes them. */
export interface PendingDecisions {
  executionId: string;
  decisions: Decision[];
  by?: string;
  reason?: string;
}

/**
 * `runtime.decide` for framework loops (R-AP-9): a store failure is an outcome with its code,
 * never a throw, and decisions that were all applied already (a framework re-running its step
 * after a resume) are answered from the log instead of failing with NOT_PAUSED: the outcome is
 * where the run stands now.
 *
 * @example
 * await decidePendingActions(runtime, { executionId, decisions: [{ seq: 2, decision: "approve" }, { seq: 3, decision: "edit", args }] });
 */
export async function decidePendingActions(
  runtime: DecidingRuntime & Pick<CodemodeRuntime, "outcome">,
  input: PendingDecisions,
): Promise<Outcome> {
  const { executionId } = input;
  try {
    const outcome = await runtime.decide(input);
    if (outcome.status !== "error" || outcome.code !== "NOT_PAUSED" || !Array.isArray(input.decisions)) return outcome;
    const state = await runtime.execution(executionId);
    // Applied already only when each entry carries this very decision (an edit: these arguments),
    // never someone else's decision on the same call.
    const applied = input.decisions.every((decision) => {
      const entry = state?.log.find((call) => call.seq === decision?.seq);
      const made = entry?.decision;
      if (made === undefined || made.approved !== (decision.decision !== "deny")) return false;
      // A decision for an earlier pause of the call was not this one, whatever it says.
      if (decision.pauseId !== undefined && entry?.pauseId !== undefined && decision.pauseId !== entry.pauseId)
        return false;
      if (made.decision !== undefined && made.decision !== decision.decision) return false;
      return decision.decision !== "edit" || JSON.stringify(entry?.args) === JSON.stringify(decision.args);
    });
    return (applied && (await runtime.outcome(executionId))) || outcome;
  } catch (error) {
    if (CodemodeError.isInstance(error)) return errorOutcome(executionId, error.code, error.message, { calls: [] });
    throw error;
  }
}

/**
 * A decision's outcome as the model should see it: `modelFacingOutcome` for a resumed run, and for
 * a rejection what was rejected and that the execution ended.
 *
 * @example
 * new ToolMessage({ tool_call_id, content: JSON.stringify(modelFacingDecision(outcome)), artifact: outcome })
 */
export function modelFacingDecision(
  outcome: DecisionOutcome,
  options: ModelOutputOptions = {},
): ModelFacingOutcome | ModelFacingRejection {
  if (outcome.status !== "rejected") return modelFacingOutcome(outcome, options);
  const { seq, connector, method, args } = outcome.rejected;
  return {
    status: "rejected",
    executionId: outcome.executionId,
    rejected: { seq, connector, method, args },
    ...(outcome.reason ? { reason: outcome.reason } : {}),
    message: `A human rejected ${connector}.${method}, so it did not run and the execution ended; calls before it stay done. Tell the user; do not re-issue the code unless they ask.`,
  };
}

/** When `seq` already carries this decision, what came after it; undefined when it does not. */
async function answerFromLog(
  runtime: DecidingRuntime,
  executionId: string,
  seq: number,
  approved: boolean,
): Promise<DecisionOutcome | undefined> {
  const state = await runtime.execution(executionId);
  const entry = state?.log.find((call) => call.seq === seq);
  if (!state || entry?.decision?.approved !== approved) return undefined;
  const calls = state.log;
  // The next action a human had to decide on is where the resumed run paused next.
  const next = calls.find(
    (call) => call.seq > seq && call.requiresApproval && (call.decision !== undefined || call.state === "pending"),
  );
  if (next) {
    // Paused there now: every action pending with it (R-AP-8); else the one it paused at then.
    const pendingNow = state.status === "paused" ? calls.filter((call) => call.state === "pending") : [];
    const pending = pendingNow.some((call) => call.seq === next.seq) ? pendingNow : [next];
    return { status: "paused", executionId, pending: pending.map((call) => toPendingAction(executionId, call)), calls };
  }
  const logs = state.logs && state.logs.length > 0 ? { logs: state.logs } : {};
  switch (state.status) {
    case "completed":
      return { status: "completed", executionId, result: state.result, ...logs, calls };
    case "error":
      return errorOutcome(executionId, state.errorCode ?? "SANDBOX_ERROR", state.error ?? "the execution failed", {
        ...logs,
        calls,
      });
    case "rejected": {
      // The decision that ended it: a rejection, else the last denial (earlier ones were caught).
      const rejected =
        calls.find((call) => call.decision?.approved === false && call.state !== "denied") ??
        calls.findLast((call) => call.state === "denied");
      return rejected ? rejectedOutcome(executionId, rejected, calls) : undefined;
    }
    case "running":
      return errorOutcome(
        executionId,
        "BUSY",
        `execution ${executionId} is running after this decision; its outcome is not known yet`,
        { calls },
      );
    default:
      return undefined;
  }
}

function rejectedOutcome(executionId: string, entry: LogEntry, calls: LogEntry[]): RejectedOutcome {
  const reason = entry.decision?.reason;
  return {
    status: "rejected",
    executionId,
    rejected: toPendingAction(executionId, entry),
    ...(reason ? { reason } : {}),
    calls,
  };
}

function toPendingAction(executionId: string, entry: LogEntry): PendingAction {
  return {
    executionId,
    seq: entry.seq,
    connector: entry.connector,
    method: entry.method,
    args: entry.args,
    pauseId: entry.pauseId ?? pauseIdOf(entry),
  };
}
