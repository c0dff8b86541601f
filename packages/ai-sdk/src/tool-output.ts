import type { Outcome, PendingAction } from "@codemode/core";
import {
  type DecisionOutcome,
  type ModelFacingOutcome,
  type ModelOutputOptions,
  modelFacingDecision,
  modelFacingOutcome,
  toModelJson,
} from "@codemode/core/adapters";
import type { JSONValue } from "ai";

/** How the Code Mode tool's output is shaped for the application and the UI stream. */
export interface ToolOutputOptions {
  /**
   * Whether the tool's output — what `result.steps[i].toolResults`, `onToolExecutionEnd` and the
   * UI message stream (`toUIMessageStream`, useChat) carry — is the full `Outcome` with `calls`,
   * the log of every connector call with its arguments and results. Default false: the output is
   * the model-facing outcome (no `calls`, bounded logs, JSON-safe), so a browser never receives
   * what the connectors returned beyond what the model saw. Read the full log on the server with
   * `runtime.execution(executionId)`.
   */
  includeCalls?: boolean;
  /** How much console output the model (and, without `includeCalls`, the UI) sees. Default 50 lines of at most 2 000 characters. */
  modelOutput?: ModelOutputOptions;
}

/**
 * The Code Mode tool's output by default: the model-facing outcome (no `calls`, bounded logs,
 * JSON-safe), except that a pause lists its pending actions in full (the first 20, and
 * `morePending` beyond) — with `executionId`, the
 * tool's `description` and its `inputSchema` — so an application or a page can offer approve,
 * deny or edit per action (`runtime.decide({ executionId, decisions })`, R-AP-8, R-AP-9).
 */
export type CodemodeToolOutput =
  | Exclude<ModelFacingOutcome, { status: "paused" }>
  | (Omit<Extract<ModelFacingOutcome, { status: "paused" }>, "pending"> & { pending: PendingAction[] });

/** The tool's output for an outcome: `CodemodeToolOutput`, or the whole `Outcome` when `includeCalls`. */
export function codemodeToolOutput(outcome: Outcome, options: ToolOutputOptions): Outcome | CodemodeToolOutput {
  if (options.includeCalls) return outcome;
  const shown = modelFacingOutcome(outcome, options.modelOutput);
  return toModelJson(
    // The actions the model is shown, each in full; beyond them, the count (`morePending`).
    shown.status === "paused" && outcome.status === "paused"
      ? { ...shown, pending: outcome.pending.slice(0, shown.pending.length) }
      : shown,
  ) as CodemodeToolOutput;
}

// Logs of an output that is model-facing already were bounded once; bounding again would cut the summary line.
const ALREADY_BOUNDED: ModelOutputOptions = {
  maxLogLines: Number.POSITIVE_INFINITY,
  maxLogLineChars: Number.POSITIVE_INFINITY,
};

/** What `toModelOutput` hands the model for any output of the tool: the model-facing outcome. */
export function modelOutputOf(output: unknown, options: ToolOutputOptions): { type: "json"; value: JSONValue } {
  const full = options.includeCalls || (typeof output === "object" && output !== null && "calls" in output);
  return modelJson(output as DecisionOutcome, full ? options.modelOutput : ALREADY_BOUNDED);
}

/** An outcome (or a rejection) as the JSON tool-result output a model reads. */
export function modelJson(
  outcome: DecisionOutcome,
  options: ModelOutputOptions = {},
): { type: "json"; value: JSONValue } {
  return { type: "json", value: toModelJson(modelFacingDecision(outcome, options)) as JSONValue };
}
