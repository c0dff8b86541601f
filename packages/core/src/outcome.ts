/**
 * What the runtime hands back. Every failure of the model's code, of a stale id or of the store
 * becomes one of these values (R-RT-1); only host programming errors throw, at creation.
 */

import { isErrorNamed } from "./error-message.js";

/** Every error code, listed once. */
export const ERROR_CODES = [
  "SANDBOX_ERROR",
  /** The program threw and did not catch it: its own error (its message, and where), not the sandbox's. */
  "PROGRAM_ERROR",
  "SYNTAX_ERROR",
  "TIMEOUT",
  "MEMORY_LIMIT",
  "REPLAY_DIVERGENCE",
  "VALUE_TOO_LARGE",
  "NOT_SERIALIZABLE",
  "NOT_PAUSED",
  "NOT_FOUND",
  "MISSING_CONNECTOR",
  "STORAGE_ERROR",
  "BUSY",
  "INVALID_DECISION",
  "APPROVAL_DENIED",
  "CANCELLED",
  "SANDBOX_CRASHED",
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

/** `denied`: a person or the policy refused the call; it never ran (R-AP-9). */
export type LogEntryState = "executing" | "applied" | "pending" | "reverted" | "error" | "denied";

/** What a person (or the policy) decided on one pending call (R-AP-9). */
export type DecisionKind = "approve" | "deny" | "edit";

/** Who decided on an approval-gated call, for the audit trail (R-AP-7, R-AP-9). */
export interface ApprovalDecision {
  approved: boolean;
  by?: string;
  reason?: string;
  at: number;
  /** What was decided; absent on decisions recorded by `approve` and `reject` before decisions had kinds. */
  decision?: DecisionKind;
  /** The grant this decision gave: up to `calls` further calls of the same method approved as they come. */
  grant?: { calls: number };
  /** Approved through the grant that the decision on this seq gave, without a pause. */
  viaGrant?: number;
}

export interface LogEntry {
  seq: number;
  /** The connector name; "codemode" for `codemode.step` and `fetch`. */
  connector: string;
  method: string;
  args: unknown;
  result?: unknown;
  error?: string;
  requiresApproval: boolean;
  /** `replay: "reexecute"`: the result is not kept and the call runs again on every pass. */
  ephemeral?: boolean;
  state: LogEntryState;
  decision?: ApprovalDecision;
  /** For a call a person edited: the arguments the program asked for (`args` are what ran). */
  requestedArgs?: unknown;
  /** For a call that needs approval: the pause it waits (or waited) in, as `PendingAction.pauseId`. */
  pauseId?: string;
  /** For a `reverted` call: when it was rolled back, by whom and why (`runtime.rollback`). */
  revert?: { at: number; by?: string; reason?: string };
  startedAt: number;
  endedAt?: number;
}

export interface PendingAction {
  executionId: string;
  seq: number;
  connector: string;
  method: string;
  args: unknown;
  /** The tool's description, as the runtime that reads the action configures it. */
  description?: string;
  /** The tool's input schema as JSON Schema (for a form that edits the arguments); absent when it has none. */
  inputSchema?: Record<string, unknown>;
  /**
   * The pause this action waits in (R-AP-9): it changes when the call is asked again (a call
   * interrupted while it ran, with `onInterrupted: "ask"`). Give it back with a decision
   * (`Decision.pauseId`) so that an answer to an earlier pause decides nothing. Every action
   * the runtime lists has one; an action rebuilt from elsewhere (a message) may not.
   */
  pauseId?: string;
}

export type ExecutionStatus = "running" | "paused" | "completed" | "error" | "rejected" | "rolled_back";
export type ExecutionEndStatus = Exclude<ExecutionStatus, "running" | "paused">;

export interface ExecutionState {
  id: string;
  code: string;
  status: ExecutionStatus;
  log: LogEntry[];
  result?: unknown;
  error?: string;
  errorCode?: ErrorCode;
  logs?: string[];
  connectors: string[];
  createdAt: number;
  updatedAt: number;
  /** Set on an execution `runtime.fork` made: the execution and seq its log was copied from. */
  forkedFrom?: { executionId: string; fromSeq: number };
  /** Who asked for the run, as `execute({ code, by })` or `submit` was given it. */
  requestedBy?: string;
  /** For a run that ended REPLAY_DIVERGENCE: what differed, recorded against the code and tools of that pass. */
  divergence?: Divergence;
  /** The failures `runtime.rerun` ran this execution again after, oldest first (the last ten). */
  reruns?: Array<{ at: number; error: string; code?: ErrorCode }>;
}

/** One call as a divergence shows it: what the log holds, or what the program issues now. */
export interface DivergentCall {
  connector: string;
  method: string;
  /** The arguments, decoded (undefined for none, or when they could not be read). */
  args: unknown;
}

/** One place where the recorded arguments and the arguments issued now differ. */
export interface ArgumentDifference {
  /** Where, as a JavaScript path from the argument: `""` for the whole of it, `.items[2].sku`. */
  path: string;
  /** Absent when the recorded arguments had nothing there. */
  recorded?: unknown;
  /** Absent when the arguments issued now have nothing there. */
  now?: unknown;
}

/**
 * Why a stored run no longer replays against the current code and tools (R-RP-2), recorded
 * against now: the same data in a `REPLAY_DIVERGENCE` outcome and in `runtime.replayCheck`.
 * - `call`: another connector or method at this seq;
 * - `arguments`: the same method with other arguments (see `argumentDiff`);
 * - `schema`: the tool's schema refuses the recorded arguments (see `schemaError`);
 * - `missing-tool`: the recorded connector or method is not configured any more;
 * - `ended`: the program ended before reaching this recorded seq.
 */
export interface Divergence {
  seq: number;
  kind: "call" | "arguments" | "schema" | "missing-tool" | "ended";
  recorded?: DivergentCall;
  now?: DivergentCall;
  /** For `arguments`: the first places that differ (at most 20). */
  argumentDiff?: ArgumentDifference[];
  /** For `schema`: what the tool's schema said of the recorded arguments. */
  schemaError?: string;
  /** One sentence for people and models. */
  message: string;
}

export type Outcome =
  | { status: "completed"; executionId: string; result: unknown; logs?: string[]; calls?: LogEntry[] }
  | { status: "paused"; executionId: string; pending: PendingAction[]; logs?: string[]; calls?: LogEntry[] }
  | {
      status: "error";
      executionId: string;
      error: string;
      code: ErrorCode;
      logs?: string[];
      calls?: LogEntry[];
      /** With `REPLAY_DIVERGENCE`, from the pass that found it: what differs, recorded against now. */
      divergence?: Divergence;
    };

export type ErrorOutcome = Extract<Outcome, { status: "error" }>;

/** The one place a failure becomes data. */
export function errorOutcome(
  executionId: string,
  code: ErrorCode,
  error: string,
  extra: { logs?: string[]; calls?: LogEntry[]; divergence?: Divergence } = {},
): ErrorOutcome {
  const outcome: ErrorOutcome = { status: "error", executionId, error, code };
  if (extra.logs && extra.logs.length > 0) outcome.logs = extra.logs;
  if (extra.divergence) outcome.divergence = extra.divergence;
  // R-RT-2: every outcome carries the log as it stands; none when the execution is unknown.
  outcome.calls = extra.calls ?? [];
  return outcome;
}

/** A failure the runtime raises internally and turns into an outcome at its edge. */
export class CodemodeError extends Error {
  override readonly name = "CodemodeError";
  constructor(
    readonly code: ErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }

  static isInstance(error: unknown): error is CodemodeError {
    return isErrorNamed(error, "CodemodeError", "code");
  }
}

/** What `rollback` did, as data (R-RB-1 … R-RB-4). */
export interface RollbackReport {
  executionId: string;
  /** Who rolled back, as given to `rollback`. */
  by?: string;
  /** The execution's status after the rollback. */
  status: ExecutionStatus;
  /** Seqs reverted by this call, highest first. */
  reverted: number[];
  failed: { seq: number; error: string }[];
  /** Applied calls with no `revert`, or whose connector is not configured now. */
  skipped: number[];
  /** Set when the rollback could not run at all (NOT_FOUND, BUSY, STORAGE_ERROR). */
  code?: ErrorCode;
  error?: string;
}
