import type { Divergence, LogEntry, Outcome } from "../outcome.js";

export interface ModelOutputOptions {
  /** Log lines the model sees; the rest are summarised. Default 50. */
  maxLogLines?: number;
  /** Characters per log line the model sees. Default 2 000. */
  maxLogLineChars?: number;
}

/**
 * A call that a person, the policy or a grant decided, as the model is told of it (R-AP-9): what
 * ran, with what, and what came of it, or that it was denied and why.
 */
export interface DecidedCall {
  seq: number;
  /** `connector.method`. */
  call: string;
  /** The arguments it ran with (edited: the person's), or was denied with. */
  args: unknown;
  /** `approved` (by a person or the policy), `edited` (ran with a person's arguments), `granted` (approved by an earlier grant), `denied`. */
  decision: "approved" | "edited" | "granted" | "denied";
  by?: string;
  reason?: string;
  /** What it came to: `ran`, `failed`, `denied`, or `not run yet` (approved, its pass still to come). */
  outcome: "ran" | "failed" | "denied" | "not run yet";
  /** What it returned as JSON text, or the error it failed with, cut to 200 characters. */
  result?: string;
}

/** What every model-facing outcome may carry besides its status: the calls decided in the run (R-AP-9). */
interface DecidedCalls {
  /**
   * Every call of the run that was approved, edited, granted or denied, in seq order (the first
   * 20; `moreDecided` counts the rest): the model learns what ran even when the program's own
   * result hides it (a `Promise.all` that failed on one denial after another order was placed).
   */
  decided?: DecidedCall[];
  moreDecided?: number;
}

/** An outcome as a model should see it: no call log, bounded console output, the decided calls. */
export type ModelFacingOutcome = DecidedCalls &
  (
    | { status: "completed"; executionId: string; result: unknown; logs?: string[] }
    | {
        status: "paused";
        executionId: string;
        pending: Array<{ seq: number; connector: string; method: string; args: unknown }>;
        /** Pending actions beyond the first 20, not listed (R-AP-8: a batch may be long). */
        morePending?: number;
        message: string;
        logs?: string[];
      }
    | {
        status: "error";
        executionId: string;
        code: string;
        error: string;
        logs?: string[];
        /** With REPLAY_DIVERGENCE: what differs, recorded against now (bounded: 20 paths, clipped values). */
        divergence?: Divergence;
      }
  );

/**
 * What a model is told of a pause that waits outside the chat (one the chat may approve becomes an
 * approval request before the model sees it): where a person approves it, that the run then
 * resumes without the model, and who reports the result. The MCP server words it for what its
 * client can do (mcp/server-tools.ts).
 */
const PAUSED_MESSAGE =
  "Paused: a person must approve the pending action (in the app, its approval inbox or `codemode approve`); the run then resumes by itself. Tell the user what waits; do not re-issue the code. The app reports the result.";

/** Pending actions a model is shown of one pause; the rest are counted. */
const MODEL_PENDING_LISTED = 20;

/**
 * What every framework adapter hands the model (R-AI-1, R-LC-1): the outcome without `calls`
 * (the audit log is for the application), logs bounded, for a pause a sentence telling the
 * model to wait for the human instead of re-issuing the code, and for a divergence what differs.
 *
 * @example
 * toModelOutput: ({ output }) => ({ type: "json", value: modelFacingOutcome(output) })
 */
export function modelFacingOutcome(outcome: Outcome, options: ModelOutputOptions = {}): ModelFacingOutcome {
  const logs = boundLogs(outcome.logs, options);
  const withLogs = { ...(logs ? { logs } : {}), ...decidedCalls(outcome) };
  switch (outcome.status) {
    case "completed":
      return { status: "completed", executionId: outcome.executionId, result: outcome.result, ...withLogs };
    case "paused":
      return {
        status: "paused",
        executionId: outcome.executionId,
        pending: outcome.pending
          .slice(0, MODEL_PENDING_LISTED)
          .map(({ seq, connector, method, args }) => ({ seq, connector, method, args })),
        ...(outcome.pending.length > MODEL_PENDING_LISTED
          ? { morePending: outcome.pending.length - MODEL_PENDING_LISTED }
          : {}),
        message: PAUSED_MESSAGE,
        ...withLogs,
      };
    case "error":
      return {
        status: "error",
        executionId: outcome.executionId,
        code: outcome.code,
        error: outcome.error,
        ...withLogs,
        ...(outcome.divergence ? { divergence: outcome.divergence } : {}),
      };
  }
}

/** Decided calls a model is shown of one run; the rest are counted. */
const MODEL_DECIDED_LISTED = 20;
/** Characters of a decided call's result (as JSON) a model is shown. */
const RESULT_DIGEST_CHARS = 200;

/**
 * The calls of the outcome's log that were decided, as the model is told of them; an outcome that
 * is model-facing already (no `calls`) keeps the ones it carries.
 */
function decidedCalls(outcome: Outcome): DecidedCalls {
  if (!outcome.calls) {
    const shown = outcome as DecidedCalls;
    return {
      ...(Array.isArray(shown.decided) ? { decided: shown.decided } : {}),
      ...(typeof shown.moreDecided === "number" ? { moreDecided: shown.moreDecided } : {}),
    };
  }
  const decided = outcome.calls.filter((entry) => entry.decision !== undefined);
  if (decided.length === 0) return {};
  return {
    decided: decided.slice(0, MODEL_DECIDED_LISTED).map(toDecidedCall),
    ...(decided.length > MODEL_DECIDED_LISTED ? { moreDecided: decided.length - MODEL_DECIDED_LISTED } : {}),
  };
}

function toDecidedCall(entry: LogEntry): DecidedCall {
  const decision = entry.decision as NonNullable<LogEntry["decision"]>;
  const kind =
    entry.state === "denied" || !decision.approved
      ? "denied"
      : decision.viaGrant !== undefined
        ? "granted"
        : decision.decision === "edit"
          ? "edited"
          : "approved";
  const outcome =
    entry.state === "denied"
      ? "denied"
      : entry.state === "applied" || entry.state === "reverted"
        ? "ran"
        : entry.state === "error"
          ? "failed"
          : "not run yet";
  const result = outcome === "ran" ? digest(entry.result) : outcome === "failed" ? entry.error : undefined;
  return {
    seq: entry.seq,
    call: `${entry.connector}.${entry.method}`,
    args: entry.args,
    decision: kind,
    ...(decision.by !== undefined ? { by: decision.by } : {}),
    ...(decision.reason !== undefined ? { reason: decision.reason } : {}),
    outcome,
    ...(result !== undefined ? { result: clip(result) } : {}),
  };
}

function digest(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

function clip(text: string): string {
  return text.length > RESULT_DIGEST_CHARS
    ? `${text.slice(0, RESULT_DIGEST_CHARS)}… [${text.length - RESULT_DIGEST_CHARS} more characters]`
    : text;
}

function boundLogs(logs: string[] | undefined, options: ModelOutputOptions): string[] | undefined {
  if (!logs || logs.length === 0) return undefined;
  const maxLines = options.maxLogLines ?? 50;
  const maxChars = options.maxLogLineChars ?? 2_000;
  const clipped = logs
    .slice(0, maxLines)
    .map((line) =>
      line.length > maxChars ? `${line.slice(0, maxChars)}… [${line.length - maxChars} more characters]` : line,
    );
  if (logs.length > maxLines) clipped.push(`[${logs.length - maxLines} more log lines not shown]`);
  return clipped;
}

/**
 * One line for a conversation after `approve` (R-LC-2, R-AI-1): the adapters wrap it in their
 * framework's tool-result message so the model continues with the real result.
 */
export function approvalResultText(outcome: Outcome): string {
  return JSON.stringify(modelFacingOutcome(outcome));
}

/**
 * The user turn an adapter adds after replacing a paused Code Mode result that the model already
 * answered ("your order waits for approval"): without a new turn the conversation ends with the
 * model's own words and the model has nothing to answer. Shared so the model reads the same note
 * whichever framework carries it (AI SDK `continueAfterApproval`, LangChain `continueAfterApproval`).
 *
 * @example
 * approvalFollowUpText({ executionId: "e1", status: "completed" });
 * // 'Code Mode execution e1 went on after approval; the codemode result above now shows how it ended (completed).'
 */
export function approvalFollowUpText(outcome: { executionId: string; status: string }, toolName = "codemode"): string {
  const what = outcome.status === "rejected" ? "was rejected after the pause" : "went on after approval";
  return `Code Mode execution ${outcome.executionId} ${what}; the ${toolName} result above now shows how it ended (${outcome.status}).`;
}
