import type { LogEntryState } from "../../outcome.js";

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
export type CallDecision =
  | { type: "replay"; outcome: "value" | "error" }
  | { type: "execute"; reason: "new" | "approved" | "reexecute" | "interrupted" }
  | { type: "pause"; reason: "needs-approval" | "interrupted" }
  | { type: "diverge"; message: string };

/**
 * Decides one connector call from the log entry at its seq and the tool's policy. Pure: the pass
 * does the effects. The rules, in order:
 * - no entry: a new call; it pauses if it needs approval (R-AP-1), else runs;
 * - an entry for another connector, method or arguments: divergence (R-RP-2);
 * - applied/reverted: replay the result, unless ephemeral, which runs again (R-RP-3);
 * - error: replay the rejection (R-CON-3);
 * - pending: runs once approved, else stays paused (R-AP-2);
 * - executing (the host died mid-call): runs again with the same idempotency key (R-RP-4),
 *   or asks again when the tool says `onInterrupted: "ask"` (R-RP-4b).
 */
export function decideCall(call: IssuedCall, recorded: RecordedCall | undefined, policy: CallPolicy): CallDecision {
  if (!recorded)
    return policy.requiresApproval ? { type: "pause", reason: "needs-approval" } : { type: "execute", reason: "new" };

  const difference = describeDifference(call, recorded);
  if (difference) return { type: "diverge", message: divergenceMessage(call.seq, difference) };

  switch (recorded.state) {
    case "applied":
    case "reverted":
      return recorded.ephemeral ? { type: "execute", reason: "reexecute" } : { type: "replay", outcome: "value" };
    case "error":
      return { type: "replay", outcome: "error" };
    case "pending":
      return recorded.approved ? { type: "execute", reason: "approved" } : { type: "pause", reason: "needs-approval" };
    case "executing":
      if (recorded.ephemeral) return { type: "execute", reason: "reexecute" };
      if (policy.onInterrupted === "ask") return { type: "pause", reason: "interrupted" };
      return { type: "execute", reason: "interrupted" };
  }
}

/** Decides a `codemode.step` record: steps never pause, they replay or are recorded. */
export function decideStep(seq: number, name: string, recorded: RecordedCall | undefined): CallDecision {
  const call: IssuedCall = { seq, connector: "codemode", method: "step", canonicalArgs: stepArgs(name) };
  if (!recorded) return { type: "execute", reason: "new" };
  const difference = describeDifference(call, recorded);
  if (difference) return { type: "diverge", message: divergenceMessage(seq, difference) };
  return { type: "replay", outcome: recorded.state === "error" ? "error" : "value" };
}

/** The canonical argument text of a step: its identity is its name (R-RP-5). */
export function stepArgs(name: string): string {
  return JSON.stringify({ name });
}

function describeDifference(call: IssuedCall, recorded: RecordedCall): string | undefined {
  const issued = `${call.connector}.${call.method}`;
  const logged = `${recorded.connector}.${recorded.method}`;
  if (issued !== logged)
    return `the program called ${issued}(${preview(call.canonicalArgs)}) where the log has ${logged}(${preview(recorded.canonicalArgs)})`;
  if (call.canonicalArgs !== recorded.canonicalArgs) {
    return `the program called ${issued} with ${preview(call.canonicalArgs)} where the log has ${preview(recorded.canonicalArgs)}`;
  }
  return undefined;
}

function divergenceMessage(seq: number, difference: string): string {
  return (
    `Replay diverged at seq ${seq}: ${difference}. Every pass must issue the same calls in the same order with the same arguments; ` +
    `wrap time, randomness and other values that change between runs in codemode.step(name, fn) so they are recorded once.`
  );
}

function preview(text: string): string {
  if (text === "") return "no argument";
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}
