/**
 * Names of the spans, events and attributes the runtime emits. Every span carries
 * `codemode.execution.id`, so a trace backend can join the passes of one execution across
 * operations (an execute that paused, the approve that resumed it hours later) and with the
 * agent framework's own spans (the AI SDK's `ai.toolCall`).
 */
export const CODEMODE_SPANS = {
  /** A runtime operation; `codemode.execute`, `codemode.approve`, `codemode.decide`, `codemode.recover`, `codemode.reject`, `codemode.cancel`, `codemode.rollback`. */
  operationPrefix: "codemode.",
  /** One run of the program from the top in a fresh sandbox. */
  pass: "codemode.pass",
  /** One connector call or step: `codemode.call github.create_issue`. */
  callPrefix: "codemode.call ",
} as const;

export const CODEMODE_EVENTS = {
  /** A pass paused at a call that needs approval (on the pass and on the operation span). */
  pause: "codemode.pause",
  /** A pending call was approved (one event per call); on the approve or decide span, before its pass. */
  approve: "codemode.approve",
  /** A pending call was edited: it runs with other arguments (R-AP-9); on the decide span. */
  edit: "codemode.edit",
  /** A pending call was denied: it rejects inside the program (R-AP-9); on the decide span. */
  deny: "codemode.deny",
  /** The pending call was rejected and the execution ended `rejected`. */
  reject: "codemode.reject",
  /** The run was cancelled (`runtime.cancel`), or a pass in another process was asked to stop. */
  cancel: "codemode.cancel",
  /** A rollback ran; counts of reverted, failed and skipped calls. */
  rollback: "codemode.rollback",
} as const;

export const CODEMODE_ATTRIBUTES = {
  executionId: "codemode.execution.id",
  runtimeName: "codemode.runtime.name",
  operation: "codemode.operation",
  /** The execution's status once the operation returned: completed, paused, error… */
  outcomeStatus: "codemode.outcome.status",
  errorCode: "codemode.error.code",
  passNumber: "codemode.pass.number",
  /** How the pass ended: completed, paused or error. */
  passEnd: "codemode.pass.end",
  /** Calls the sandbox answered from the preloaded log in this pass. */
  passReplayedCalls: "codemode.pass.replayed_calls",
  /** Time the pass waited for a place among `maxPassesInFlight`, in ms (0: none). */
  passQueuedMs: "codemode.pass.queued_ms",
  /** Passes waiting ahead of this one when it asked for a place. */
  passQueueLength: "codemode.pass.queue_length",
  connector: "codemode.call.connector",
  method: "codemode.call.method",
  seq: "codemode.call.seq",
  /** replay, execute, pause, halt (divergence, lost lease, store failure) or refuse (not a configured tool). */
  decision: "codemode.call.decision",
  /** The log entry's state after the call: applied, error, pending, executing, reverted. */
  state: "codemode.call.state",
  /** True when the recorded result was handed back without calling the connector. */
  replayed: "codemode.call.replayed",
  /** True for the call a person approved, run in this pass. */
  approved: "codemode.call.approved",
  stepName: "codemode.step.name",
  decidedBy: "codemode.decision.by",
  rejected: "codemode.reject.applied",
  /** What `cancel` did: cancelled, requested, ended or not_found. */
  cancelResult: "codemode.cancel.result",
  reverted: "codemode.rollback.reverted",
  failed: "codemode.rollback.failed",
  skipped: "codemode.rollback.skipped",
  // Only with `recordValues: true`:
  arguments: "codemode.call.arguments",
  result: "codemode.call.result",
  error: "codemode.call.error",
  code: "codemode.code",
  outcomeResult: "codemode.outcome.result",
  outcomeError: "codemode.outcome.error",
  reason: "codemode.decision.reason",
} as const;
