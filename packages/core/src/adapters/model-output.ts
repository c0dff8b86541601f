import type { Divergence, Outcome } from "../outcome.js";

export interface ModelOutputOptions {
  /** Log lines the model sees; the rest are summarised. Default 50. */
  maxLogLines?: number;
  /** Characters per log line the model sees. Default 2 000. */
  maxLogLineChars?: number;
}

/** An outcome as a model should see it: no call log, bounded console output. */
export type ModelFacingOutcome =
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
    };

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
  const withLogs = logs ? { logs } : {};
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
