import type { CodemodeRuntime, Decision, ErrorOutcome } from "@codemode/core";
import { CliError, firstLine, storeUnreachable, unknownExecution } from "../cli-error.js";
import { EXIT_CODES } from "../exit-codes.js";
import { explainStale } from "../explain.js";
import { visibleOnOneLine } from "../output/terminal.js";

/** Codes that mean nothing was decided (as opposed to a run that went on and failed after it). */
const REFUSALS = new Set(["NOT_FOUND", "BUSY", "STORAGE_ERROR", "MISSING_CONNECTOR", "INVALID_DECISION"]);

/**
 * Whether an error `outcome` is a refusal: the decisions were not made. A run that ended
 * `rejected` after them (the program did not catch a denial, R-AP-9) is APPROVAL_DENIED, not a
 * refusal. NOT_PAUSED is a refusal unless every decided entry carries this command's decision,
 * written since `since` (the run moved on after them, and someone asked again).
 */
export function isRefusal(outcome: ErrorOutcome, decisions: readonly Decision[], since: number): boolean {
  // A store failure or a takeover during the resumed pass reads the same as one before it: same exit code.
  if (REFUSALS.has(outcome.code)) return true;
  if (outcome.code !== "NOT_PAUSED") return false;
  return !decisions.every((decision) => {
    const made = outcome.calls?.find((entry) => entry.seq === decision.seq)?.decision;
    return made !== undefined && made.decision === decision.decision && made.at >= since;
  });
}

/** Why decisions were refused, as the one line the person needs. */
export async function refusal(
  runtime: CodemodeRuntime,
  outcome: ErrorOutcome,
  seqs: readonly number[],
): Promise<CliError> {
  const executionId = visibleOnOneLine(outcome.executionId);
  switch (outcome.code) {
    case "NOT_FOUND":
      return unknownExecution(executionId);
    case "STORAGE_ERROR":
      return storeUnreachable(outcome.error);
    case "BUSY":
      // The runtime's own words (who holds the run, try again): said once, here and everywhere.
      return new CliError(EXIT_CODES.busy, visibleOnOneLine(firstLine(outcome.error)), "BUSY");
    case "MISSING_CONNECTOR":
      return new CliError(
        EXIT_CODES.conflict,
        `${visibleOnOneLine(outcome.error)}; add it to the config's runtime and decide again`,
        "MISSING_CONNECTOR",
      );
    case "INVALID_DECISION":
      // The runtime's sentence names the seq and the tool, and what its schema said.
      return new CliError(
        EXIT_CODES.invalidDecision,
        `execution ${executionId}: the decision was refused, nothing changed: ${visibleOnOneLine(outcome.error)}`,
        "INVALID_DECISION",
      );
    default:
      return staleError(runtime, outcome.executionId, seqs);
  }
}

/**
 * "seq 1 (tickets.create) was already approved by dana at 17:51:34 (2 min ago); the run is now
 * completed", about the first of `seqs` that is not pending now (or the latest decision, with none).
 */
export async function staleError(
  runtime: CodemodeRuntime,
  executionId: string,
  seqs: readonly number[],
): Promise<CliError> {
  const execution = await runtime.execution(executionId);
  const pendingNow = new Set(
    execution?.log.filter((entry) => entry.state === "pending").map((entry) => entry.seq) ?? [],
  );
  const seq = seqs.find((candidate) => !pendingNow.has(candidate)) ?? seqs[0];
  const stale = explainStale(execution, executionId, seq);
  if (!stale.found) return unknownExecution(visibleOnOneLine(executionId));
  // Who decided and why are typed by people, and stored: shown, never obeyed by the terminal.
  const message = `execution ${executionId}: ${stale.message}; see: codemode show ${executionId}`;
  return new CliError(EXIT_CODES.conflict, visibleOnOneLine(message), "NOT_PAUSED");
}
