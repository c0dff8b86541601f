import type { Decision, ErrorOutcome, LogEntry } from "@codemode/core";
import { describe, expect, it } from "vitest";
import { isRefusal } from "./decision-refusal.js";

const since = 1_000;
const entry = (seq: number, decision?: LogEntry["decision"]): LogEntry => ({
  seq,
  connector: "tickets",
  method: "create",
  args: {},
  requiresApproval: true,
  state: decision?.approved === false ? "denied" : "applied",
  startedAt: 0,
  ...(decision ? { decision } : {}),
});
const ended = (code: ErrorOutcome["code"], calls: LogEntry[]): ErrorOutcome => ({
  status: "error",
  executionId: "run-1",
  code,
  error: "execution run-1 was rejected: tickets.create was denied by dana: no",
  calls,
});
const deny: Decision[] = [{ seq: 1, decision: "deny" }];

describe("isRefusal: were the decisions made, or refused?", () => {
  it("R-AP-9: NOT_PAUSED after this command's denial was written is the run ending rejected, not a refusal", () => {
    const outcome = ended("NOT_PAUSED", [entry(1, { approved: false, decision: "deny", at: since + 5 })]);
    expect(isRefusal(outcome, deny, since)).toBe(false);
  });

  it("NOT_PAUSED with an older decision (someone decided first) or none is a refusal", () => {
    const older = ended("NOT_PAUSED", [entry(1, { approved: false, decision: "deny", at: since - 5 })]);
    expect(isRefusal(older, deny, since)).toBe(true);
    const other = ended("NOT_PAUSED", [entry(1, { approved: true, decision: "approve", at: since + 5 })]);
    expect(isRefusal(other, deny, since)).toBe(true);
    expect(isRefusal(ended("NOT_PAUSED", [entry(1)]), deny, since)).toBe(true);
  });

  it("INVALID_DECISION, BUSY, STORAGE_ERROR, NOT_FOUND and MISSING_CONNECTOR always are; a failed program is not", () => {
    for (const code of ["INVALID_DECISION", "BUSY", "STORAGE_ERROR", "NOT_FOUND", "MISSING_CONNECTOR"] as const)
      expect(isRefusal(ended(code, []), deny, since), code).toBe(true);
    expect(isRefusal(ended("SANDBOX_ERROR", []), deny, since)).toBe(false);
  });
});
