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
 * Explains a decision that came too late — the run was approved or rejected by someone else,
 * expired, rolled back, or waits at another call — from the execution's audit trail, so a stale
 * click or command says who decided and when instead of failing silently.
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
  const call = entry ? `seq ${entry.seq} (${entry.connector}.${entry.method})` : `seq ${String(seq)}`;
  if (entry?.decision) {
    const { decision } = entry;
    const who = decision.by ? `by ${decision.by}` : "by someone";
    const why = decision.reason ? ` ("${decision.reason}")` : "";
    return {
      found: true,
      status,
      decision,
      message: `${call} was already ${decision.approved ? "approved" : "rejected"} ${who} at ${clockTime(decision.at)} (${ago(decision.at, now)})${why}; the run is now ${status}`,
    };
  }
  if (entry?.state === "error" && entry.error)
    return { found: true, status, message: `${call} was closed: ${entry.error}; the run is now ${status}` };
  const waiting = status === "paused" ? execution.log.find((candidate) => candidate.state === "pending") : undefined;
  if (waiting)
    return {
      found: true,
      status,
      message: `${call} is not pending; the run waits at seq ${waiting.seq} (${waiting.connector}.${waiting.method})`,
    };
  return {
    found: true,
    status,
    message: `the run is ${status}${execution.errorCode ? ` (${execution.errorCode})` : ""}; nothing of it waits for approval`,
  };
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
