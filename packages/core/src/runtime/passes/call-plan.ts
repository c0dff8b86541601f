import type { Divergence, LogEntryState } from "../../outcome.js";
import { argumentDiff, divergentCall, withMessage } from "./divergence.js";

/** A call the program issued at some seq, as the host sees it. */
export interface IssuedCall {
  seq: number;
  connector: string;
  method: string;
  /** `valueCodec.canonical` of the argument wire text ("" for none). */
  canonicalArgs: string;
}

/** What the log holds at that seq. */
export interface RecordedCall {
  connector: string;
  method: string;
  canonicalArgs: string;
  state: LogEntryState;
  ephemeral?: boolean;
  approved?: boolean;
}

/** The configured tool's policy for this call. */
export interface CallPolicy {
  /** Resolved for these arguments. */
  requiresApproval: boolean;
  reexecute: boolean;
  onInterrupted: "rerun" | "ask";
}

/** The per-call decision: a tagged union, one branch per thing the pass can do. */
export type CallPlan =
  | { type: "replay"; outcome: "value" | "error" | "denied" }
  | { type: "execute"; reason: "new" | "approved" | "reexecute" | "interrupted" }
  | { type: "pause"; reason: "needs-approval" | "interrupted" }
  | { type: "diverge"; divergence: Divergence };

/**
 * Decides one connector call from the log entry at its seq and the tool's policy. Pure: the pass
 * does the effects. The rules, in order:
 * - no entry: a new call; it pauses if it needs approval (R-AP-1), else runs;
 * - an entry for another connector, method or arguments: divergence (R-RP-2);
 * - applied/reverted: replay the result, unless ephemeral, which runs again (R-RP-3);
 * - error: replay the rejection (R-CON-3); denied: replay the denial (R-AP-9);
 * - pending: runs once approved, else stays paused (R-AP-2);
 * - executing (the host died mid-call): runs again with the same idempotency key (R-RP-4),
 *   or asks again when the tool says `onInterrupted: "ask"` (R-RP-4b).
 */
export function planCall(call: IssuedCall, recorded: RecordedCall | undefined, policy: CallPolicy): CallPlan {
  if (!recorded)
    return policy.requiresApproval ? { type: "pause", reason: "needs-approval" } : { type: "execute", reason: "new" };

  const divergence = describeDivergence(call, recorded);
  if (divergence) return { type: "diverge", divergence };

  switch (recorded.state) {
    case "applied":
    case "reverted":
      return recorded.ephemeral ? { type: "execute", reason: "reexecute" } : { type: "replay", outcome: "value" };
    case "error":
      return { type: "replay", outcome: "error" };
    case "denied":
      return { type: "replay", outcome: "denied" };
    case "pending":
      return recorded.approved ? { type: "execute", reason: "approved" } : { type: "pause", reason: "needs-approval" };
    case "executing":
      if (recorded.ephemeral) return { type: "execute", reason: "reexecute" };
      if (policy.onInterrupted === "ask") return { type: "pause", reason: "interrupted" };
      return { type: "execute", reason: "interrupted" };
  }
}

/** Decides a `codemode.step` record: steps never pause, they replay or are recorded. */
export function planStep(seq: number, name: string, recorded: RecordedCall | undefined): CallPlan {
  const call: IssuedCall = { seq, connector: "codemode", method: "step", canonicalArgs: stepArgs(name) };
  if (!recorded) return { type: "execute", reason: "new" };
  const divergence = describeDivergence(call, recorded);
  if (divergence) return { type: "diverge", divergence };
  return { type: "replay", outcome: recorded.state === "error" ? "error" : "value" };
}

/** The canonical argument text of a step: its identity is its name (R-RP-5). */
export function stepArgs(name: string): string {
  return JSON.stringify({ name });
}

/** The divergence of an issued call from the record at its seq, recorded against now; none when they match. */
export function describeDivergence(call: IssuedCall, recorded: RecordedCall): Divergence | undefined {
  const sameMethod = call.connector === recorded.connector && call.method === recorded.method;
  if (sameMethod && call.canonicalArgs === recorded.canonicalArgs) return undefined;
  const base = {
    seq: call.seq,
    kind: sameMethod ? ("arguments" as const) : ("call" as const),
    recorded: divergentCall(recorded.connector, recorded.method, recorded.canonicalArgs),
    now: divergentCall(call.connector, call.method, call.canonicalArgs),
  };
  if (!sameMethod) return withMessage(base);
  const { differences, total } = argumentDiff(recorded.canonicalArgs, call.canonicalArgs);
  const first = differences[0];
  const extra = first
    ? ` (${total === 1 ? "one difference" : `${total} differences`}, first at ${first.path === "" ? "the argument itself" : first.path})`
    : "";
  return withMessage({ ...base, argumentDiff: differences }, extra);
}
