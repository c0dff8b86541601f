/**
 * Checks that narrow an outcome to one status, or fail the test saying what came instead: the
 * approval and replay stories read their outcomes through them.
 */
import type { Outcome } from "@codemode/core";
import { expect } from "vitest";

/** The outcome, checked to be a pause (and typed as one). */
export function expectPaused(outcome: Outcome) {
  if (outcome.status !== "paused") throw new Error(`expected a pause, got ${JSON.stringify(outcome)}`);
  return outcome;
}

/** The outcome, checked to be a completion. */
export function expectCompleted(outcome: Outcome) {
  if (outcome.status !== "completed") throw new Error(`expected completion, got ${JSON.stringify(outcome)}`);
  return outcome;
}

/** The outcome, checked to be an error (with `code`, when given). */
export function expectError(outcome: Outcome, code?: string) {
  if (outcome.status !== "error") throw new Error(`expected an error, got ${JSON.stringify(outcome)}`);
  if (code !== undefined) expect(outcome.code).toBe(code);
  return outcome;
}
