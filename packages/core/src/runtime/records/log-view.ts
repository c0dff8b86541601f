import { decodeDurable } from "../../log/durable-value.js";
import type { ExecutionHead, RerunRecord, StoredEntry, StoredResult } from "../../log/interface.js";
import { pauseIdOf } from "../../log/pause-id.js";
import {
  type ArgumentDifference,
  type Divergence,
  type DivergentCall,
  ERROR_CODES,
  type ErrorCode,
  type ExecutionState,
  type ExecutionStatus,
  type LogEntry,
  type PendingAction,
} from "../../outcome.js";

// How stored records look to the application: values decoded, entries ordered by seq.

/** Who approved or rejected a pending action, and when (R-AP-7). */
/**
 * The calls of a paused execution that wait for a person, in the order they paused (R-AP-8):
 * `pendingSeqs`, or the single `pendingSeq` of a record written before batches. The store's
 * contents are hostile input: only whole seqs inside the log's bounds count, each once.
 */
const MAX_PENDING_LISTED = 10_000;

export function pendingSeqsOf(head: ExecutionHead): number[] {
  const listed = Array.isArray(head.pendingSeqs) ? head.pendingSeqs : [head.pendingSeq];
  const seqs = new Set<number>();
  for (const seq of listed.slice(0, MAX_PENDING_LISTED))
    if (Number.isSafeInteger(seq) && (seq as number) >= 0) seqs.add(seq as number);
  return [...seqs];
}

export function decisionOf(approved: boolean, by: unknown, reason: unknown) {
  const decision: { approved: boolean; by?: string; reason?: string; at: number } = { approved, at: Date.now() };
  if (typeof by === "string" && by) decision.by = by;
  if (typeof reason === "string" && reason) decision.reason = reason;
  return decision;
}

export function toPendingAction(executionId: string, entry: StoredEntry): PendingAction {
  return {
    executionId,
    seq: entry.seq,
    connector: entry.connector,
    method: entry.method,
    args: safeDecode(entry.args),
    pauseId: pauseIdOf(entry),
  };
}

/** The log as the application sees it: values decoded, ordered by seq. */
export function toLogEntries(log: ReadonlyMap<number, StoredEntry>): LogEntry[] {
  return [...log.values()]
    .sort((a, b) => a.seq - b.seq)
    .map((entry) => {
      const view: LogEntry = {
        seq: entry.seq,
        connector: entry.connector,
        method: entry.method,
        args: safeDecode(entry.args),
        requiresApproval: entry.requiresApproval,
        state: entry.state,
        startedAt: entry.startedAt,
      };
      if (entry.result !== undefined) view.result = safeDecode(entry.result);
      if (entry.error !== undefined) view.error = entry.error;
      if (entry.ephemeral) view.ephemeral = true;
      if (entry.decision) view.decision = { ...entry.decision };
      if (typeof entry.requestedArgs === "string") view.requestedArgs = safeDecode(entry.requestedArgs);
      if (entry.revert) view.revert = { ...entry.revert };
      if (entry.requiresApproval) view.pauseId = pauseIdOf(entry);
      if (entry.endedAt !== undefined) view.endedAt = entry.endedAt;
      return view;
    });
}

function safeDecode(text: string): unknown {
  try {
    return decodeDurable(text);
  } catch {
    return text;
  }
}

export function toExecutionState(
  head: ExecutionHead,
  code: string,
  log: LogEntry[],
  stored: StoredResult | undefined,
): ExecutionState {
  const state: ExecutionState = {
    id: head.id,
    code,
    status: head.status,
    log,
    connectors: [...head.connectors],
    createdAt: head.createdAt,
    updatedAt: head.updatedAt,
  };
  if (stored?.result !== undefined) state.result = safeDecode(stored.result);
  else if (stored?.omitted !== undefined) state.result = { omitted: stored.omitted };
  if (stored?.logs) state.logs = stored.logs;
  if (head.error !== undefined) state.error = head.error;
  if (head.errorCode !== undefined) state.errorCode = head.errorCode;
  const divergence = readDivergence(stored?.divergence);
  if (divergence) state.divergence = divergence;
  // The store's contents are hostile input: only a well-formed origin is shown.
  const origin = head.forkedFrom;
  if (origin && typeof origin.executionId === "string" && Number.isSafeInteger(origin.fromSeq))
    state.forkedFrom = { executionId: origin.executionId, fromSeq: origin.fromSeq };
  if (typeof head.requestedBy === "string") state.requestedBy = head.requestedBy;
  const reruns = Array.isArray(head.reruns) ? head.reruns.filter(isRerunRecord) : [];
  if (reruns.length > 0)
    state.reruns = reruns.map((record) => ({
      at: record.at,
      error: record.error,
      ...(record.code !== undefined ? { code: record.code } : {}),
    }));
  return state;
}

/** An execution as a listing shows it: its record without code or log (`execution(id)` has those). */
export interface ExecutionSummary {
  id: string;
  status: ExecutionStatus;
  createdAt: number;
  updatedAt: number;
  /** Connectors the code names. */
  connectors: string[];
  /** Passes run so far. */
  passes: number;
  /** The seq of the first action waiting for approval, when paused. */
  pendingSeq?: number;
  /** Every action waiting for approval, when paused (R-AP-8). */
  pendingSeqs?: number[];
  error?: string;
  errorCode?: ErrorCode;
}

export function toSummary(head: ExecutionHead): ExecutionSummary {
  const summary: ExecutionSummary = {
    id: head.id,
    status: head.status,
    createdAt: head.createdAt,
    updatedAt: head.updatedAt,
    connectors: [...head.connectors],
    passes: head.passes,
  };
  const pendingSeqs = pendingSeqsOf(head);
  if (pendingSeqs.length > 0) {
    summary.pendingSeq = pendingSeqs[0];
    summary.pendingSeqs = pendingSeqs;
  }
  if (head.error !== undefined) summary.error = head.error;
  if (head.errorCode !== undefined) summary.errorCode = head.errorCode;
  return summary;
}

/** A well-formed record of a rerun: the store's contents are hostile input. */
function isRerunRecord(value: unknown): value is RerunRecord {
  if (typeof value !== "object" || value === null) return false;
  const record = value as Partial<RerunRecord>;
  return (
    Number.isFinite(record.at) &&
    typeof record.error === "string" &&
    (record.code === undefined || (ERROR_CODES as readonly unknown[]).includes(record.code))
  );
}

const DIVERGENCE_KINDS: ReadonlySet<unknown> = new Set(["call", "arguments", "schema", "missing-tool", "ended"]);

/**
 * A stored divergence, rebuilt from its known fields when it is well formed; undefined otherwise.
 * The store's contents are hostile input: what is not a divergence is not shown as one.
 */
export function readDivergence(value: unknown): Divergence | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const stored = value as Record<string, unknown>;
  if (!Number.isSafeInteger(stored.seq) || !DIVERGENCE_KINDS.has(stored.kind) || typeof stored.message !== "string")
    return undefined;
  const divergence: Divergence = {
    seq: stored.seq as number,
    kind: stored.kind as Divergence["kind"],
    message: stored.message,
  };
  const recorded = readCall(stored.recorded);
  if (recorded) divergence.recorded = recorded;
  const now = readCall(stored.now);
  if (now) divergence.now = now;
  if (Array.isArray(stored.argumentDiff)) {
    const differences = stored.argumentDiff.flatMap((item: unknown): ArgumentDifference[] => {
      if (typeof item !== "object" || item === null || typeof (item as { path?: unknown }).path !== "string") return [];
      const { path, recorded: before, now: after } = item as { path: string; recorded?: unknown; now?: unknown };
      return [
        {
          path,
          ...(Object.hasOwn(item, "recorded") ? { recorded: before } : {}),
          ...(Object.hasOwn(item, "now") ? { now: after } : {}),
        },
      ];
    });
    if (differences.length > 0) divergence.argumentDiff = differences;
  }
  if (typeof stored.schemaError === "string") divergence.schemaError = stored.schemaError;
  return divergence;
}

function readCall(value: unknown): DivergentCall | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const call = value as Record<string, unknown>;
  if (typeof call.connector !== "string" || typeof call.method !== "string") return undefined;
  return { connector: call.connector, method: call.method, args: call.args };
}
