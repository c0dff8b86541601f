import type { Outcome, RollbackReport } from "../../outcome.js";
import { CODEMODE_ATTRIBUTES as A, CODEMODE_EVENTS } from "../../telemetry/attributes.js";
import type { Attributes, OperationSpan, Telemetry } from "../../telemetry/interface.js";
import { noteDenials } from "../../telemetry/live-telemetry.js";
import type { CodemodeRuntime } from "./interface.js";

/**
 * The runtime handle with a span around each operation that runs passes or decides: execute,
 * approve, decide, recover, reject and rollback. Approve and decide carry an event per action
 * decided (approve, edit, deny), reported by their pass (live-telemetry.ts). Reads and listings are left alone (an inbox polling
 * `pending()` every second would bury the traces that matter).
 */
export function instrumentRuntime(runtime: CodemodeRuntime, telemetry: Telemetry): CodemodeRuntime {
  if (!telemetry.enabled) return runtime;
  const { recordValues } = telemetry;
  const describe = (span: OperationSpan, outcome: Outcome) => describeOutcome(span, outcome, recordValues);
  /** An operation on one execution: its span names the execution when the input does. */
  const onExecution = <T>(
    name: string,
    executionId: unknown,
    run: () => Promise<T>,
    describeResult: (span: OperationSpan, result: T) => void,
  ) => telemetry.operation(name, idOf(executionId), run, describeResult);
  /** A new run's span: its attributes, and how it ended. */
  const newRun = (name: string, attributes: Attributes, run: () => Promise<Outcome>) =>
    telemetry.operation(name, attributes, run, describe);
  /** Who decided and why, on a decision's event (the reason only when values are recorded). */
  const decidedBy = (attributes: Attributes, input: { by?: string; reason?: string }): Attributes => {
    if (input.by) attributes[A.decidedBy] = input.by;
    if (recordValues && input.reason) attributes[A.reason] = input.reason;
    return attributes;
  };
  // One wrapper per operation: each names what its span says.
  return {
    ...runtime,
    execute: (input) =>
      newRun("execute", recordValues && typeof input?.code === "string" ? { [A.code]: input.code } : {}, () =>
        runtime.execute(input),
      ),
    callTool: (input) =>
      newRun("callTool", typeof input?.tool === "string" ? { "codemode.tool": input.tool } : {}, () =>
        runtime.callTool(input),
      ),
    approve: (input) => onExecution("approve", input?.executionId, () => runtime.approve(input), describe),
    decide: (input) =>
      onExecution(
        "decide",
        input?.executionId,
        () => {
          noteDenials(deniedSeqs(input?.decisions));
          return runtime.decide(input);
        },
        describe,
      ),
    recover: (options) =>
      onExecution(
        "recover",
        options?.executionId,
        () => runtime.recover(options),
        (span, outcomes) => {
          span.set("codemode.recover.count", outcomes.length);
          if (outcomes.length === 1) describe(span, outcomes[0] as Outcome);
        },
      ),
    reject: (input) =>
      onExecution(
        "reject",
        input?.executionId,
        () => runtime.reject(input),
        (span, rejected) => {
          span.set(A.rejected, rejected);
          if (!rejected) return;
          span.event(
            CODEMODE_EVENTS.reject,
            decidedBy({ [A.executionId]: input.executionId, [A.seq]: input.seq }, input),
          );
        },
      ),
    cancel: (input) =>
      onExecution(
        "cancel",
        input?.executionId,
        () => runtime.cancel(input),
        (span, report) => {
          span.set(A.cancelResult, report.result);
          if (report.result !== "cancelled" && report.result !== "requested") return;
          span.event(
            CODEMODE_EVENTS.cancel,
            decidedBy({ [A.executionId]: report.executionId, [A.cancelResult]: report.result }, input),
          );
        },
      ),
    rollback: (input) => onExecution("rollback", input?.executionId, () => runtime.rollback(input), describeRollback),
  };
}

/** The seqs of the deny decisions in a decide input, read as the hostile input it may be (decide checks it). */
function deniedSeqs(decisions: unknown): number[] {
  if (!Array.isArray(decisions)) return [];
  return decisions.flatMap((item: unknown) => {
    const { seq, decision } = (typeof item === "object" && item !== null ? item : {}) as Record<string, unknown>;
    return decision === "deny" && typeof seq === "number" ? [seq] : [];
  });
}

function idOf(executionId: unknown): Attributes {
  return typeof executionId === "string" && executionId ? { [A.executionId]: executionId } : {};
}

function describeOutcome(span: OperationSpan, outcome: Outcome, recordValues: boolean): void {
  span.set(A.executionId, outcome.executionId);
  span.set(A.outcomeStatus, outcome.status);
  if (outcome.status === "error") span.fail(outcome.code, outcome.error);
  if (outcome.status === "completed" && recordValues) {
    const text = JSON.stringify(outcome.result);
    if (text !== undefined) span.set(A.outcomeResult, text);
  }
}

function describeRollback(span: OperationSpan, report: RollbackReport): void {
  span.set(A.outcomeStatus, report.status);
  span.event(CODEMODE_EVENTS.rollback, {
    [A.executionId]: report.executionId,
    [A.reverted]: report.reverted.length,
    [A.failed]: report.failed.length,
    [A.skipped]: report.skipped.length,
  });
  if (report.code) span.fail(report.code, report.error);
  else if (report.failed.length > 0) span.fail("REVERT_FAILED");
}
