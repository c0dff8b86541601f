import type { ExecutionState, LogEntry } from "@codemode/core";

/** Why a decision on a run could not be made: who decided already and when, or what state the run is in. */
export interface StaleDecision {
  /** False when the store has no such execution. */
  found: boolean;
  status?: ExecutionState["status"];
  /** The entry's decision, when someone decided it. */
  decision?: NonNullable<LogEntry["decision"]>;
  message: string;
}

/**
 * Explains a decision that came too late — the run was approved, denied or rejected by someone
 * else, expired, rolled back, or waits at other calls — from the execution's audit trail, so a
 * stale click or command says who decided and when instead of failing silently. A paused run may
 * wait at several calls at once (R-AP-8): the message names every one still pending.
 */
export function explainStale(
  execution: ExecutionState | null,
  executionId: string,
  seq: number | undefined,
  now = Date.now(),
): StaleDecision {
  if (!execution) return { found: false, message: `no execution ${executionId} in the store` };
  const { status } = execution;
  const entry =
    seq === undefined ? latestDecided(execution.log) : execution.log.find((candidate) => candidate.seq === seq);
  const call = entry ? callOf(entry) : `seq ${String(seq)}`;
  const waiting = status === "paused" ? execution.log.filter((candidate) => candidate.state === "pending") : [];
  const nowWaiting = waiting.length > 0 ? `, waiting at ${callList(waiting)}` : "";
  if (entry?.decision) {
    const { decision } = entry;
    const who = decision.by ? `by ${decision.by}` : "by someone";
    const through = decision.viaGrant !== undefined ? ` through the grant given at seq ${decision.viaGrant}` : "";
    const why = decision.reason ? ` ("${decision.reason}")` : "";
    return {
      found: true,
      status,
      decision,
      message: `${call} was already ${decidedVerb(decision)} ${who}${through} at ${clockTime(decision.at)} (${ago(decision.at, now)})${why}; the run is now ${status}${nowWaiting}`,
    };
  }
  if (entry?.state === "error" && entry.error)
    return { found: true, status, message: `${call} was closed: ${entry.error}; the run is now ${status}` };
  if (waiting.length > 0)
    return { found: true, status, message: `${call} is not pending; the run waits at ${callList(waiting)}` };
  return {
    found: true,
    status,
    message: `the run is ${status}${execution.errorCode ? ` (${execution.errorCode})` : ""}; nothing of it waits for approval`,
  };
}

/** "approved", "edited", "denied"; "rejected" for `reject` (and decisions recorded before they had kinds). */
export function decidedVerb(decision: NonNullable<LogEntry["decision"]>): string {
  if (decision.decision === "edit") return "edited";
  if (decision.decision === "deny") return "denied";
  return decision.approved ? "approved" : "rejected";
}

/** "seq 1 (tickets.create)". */
export function callOf(entry: Pick<LogEntry, "seq" | "connector" | "method">): string {
  return `seq ${entry.seq} (${entry.connector}.${entry.method})`;
}

/** "seq 1 (tickets.create) and seq 2 (tickets.create)"; the first five and how many more. */
export function callList(entries: ReadonlyArray<Pick<LogEntry, "seq" | "connector" | "method">>): string {
  const named = entries.slice(0, 5).map(callOf);
  if (entries.length > 5) return `${named.join(", ")} and ${entries.length - 5} more`;
  return named.length > 1 ? `${named.slice(0, -1).join(", ")} and ${named.at(-1)}` : (named[0] ?? "");
}

function latestDecided(log: readonly LogEntry[]): LogEntry | undefined {
  return [...log].reverse().find((entry) => entry.decision !== undefined);
}

/** "17:51:34" today, "2026-12-01 17:51" otherwise, in local time. */
export function clockTime(at: number, now = Date.now()): string {
  const date = new Date(at);
  const pad = (value: number) => String(value).padStart(2, "0");
  const time = `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
  if (new Date(now).toDateString() === date.toDateString()) return time;
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ${time.slice(0, 5)}`;
}

/** "just now", "42 s ago", "5 min ago", "3 h ago", "2 d ago". */
export function ago(at: number, now = Date.now()): string {
  const seconds = Math.max(0, Math.round((now - at) / 1000));
  if (seconds < 5) return "just now";
  if (seconds < 60) return `${seconds} s ago`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ago`;
  if (seconds < 86_400) return `${Math.floor(seconds / 3600)} h ago`;
  return `${Math.floor(seconds / 86_400)} d ago`;
}
