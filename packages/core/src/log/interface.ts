import type { ApprovalDecision, Divergence, ErrorCode, ExecutionStatus, LogEntryState } from "../outcome.js";

// The types of the durable log: what the store keeps per execution (its head, its entries, its
// final result), the Keyv it keeps them in, and who may write them. ExecutionStore reads and
// writes them; the runtime, the pass and the storages share them from here.

/**
 * The subset of a Keyv instance (≥ 5.6) the runtime uses. Any Keyv adapter fits; `getMany`
 * makes a pass's log load one round trip (R-ST-2).
 */
export interface KeyvLike {
  get(key: string): Promise<unknown>;
  set(key: string, value: unknown, ttl?: number): Promise<unknown>;
  delete(key: string | string[]): Promise<unknown>;
  getMany?(keys: string[]): Promise<unknown[]>;
  setMany?(entries: Array<{ key: string; value: unknown }>): Promise<unknown>;
  deleteMany?(keys: string[]): Promise<unknown>;
  throwOnErrors?: boolean;
  on?(event: "error", listener: (error: unknown) => void): unknown;
  /** Keyv's adapter, when this is a Keyv instance. */
  store?: unknown;
}

/** The small record of an execution that changes with its status. Code and log live apart. */
export interface ExecutionHead {
  id: string;
  status: ExecutionStatus;
  createdAt: number;
  updatedAt: number;
  connectors: string[];
  /** Log entries exist only at seqs below this; raised in blocks so it is rarely rewritten. */
  seqLimit: number;
  /** The first call that waits for a person, when paused (kept for readers of one action). */
  pendingSeq?: number;
  /** Every call that waits for a person, when paused, in the order they paused (R-AP-8). */
  pendingSeqs?: number[];
  /** Replay-stable clock and randomness (R-SB-6), kept so every pass sees the same values. */
  deterministic: boolean;
  seed: string;
  clockMs: number;
  error?: string;
  errorCode?: ErrorCode;
  passes: number;
  /** Set on an execution `runtime.fork` made: where its log came from. */
  forkedFrom?: { executionId: string; fromSeq: number };
  /** Who asked for the run (`execute({ code, by })`). */
  requestedBy?: string;
  /**
   * Set on a direct call's run (`runtime.callTool`): the tool it calls, "connector.method", which
   * this run may call even when only the model may (`callers: ["model"]`).
   */
  direct?: string;
  /** The failures `runtime.rerun` ran this execution again after, oldest first (the last few). */
  reruns?: RerunRecord[];
}

/** A failure an execution was run again after: when, and what it had ended with. */
export interface RerunRecord {
  at: number;
  error: string;
  code?: ErrorCode;
}

/** Who reverted a call, when, and why (`runtime.rollback({ by, reason })`). */
export interface RevertRecord {
  at: number;
  by?: string;
  reason?: string;
}

/** A log entry as stored: arguments and results stay in wire text of the value codec. */
export interface StoredEntry {
  seq: number;
  connector: string;
  method: string;
  /** Wire text ("" for no argument). */
  args: string;
  /** Wire text of the result; absent for ephemeral entries and failures. */
  result?: string;
  error?: string;
  requiresApproval: boolean;
  ephemeral?: boolean;
  state: LogEntryState;
  /** Steps: the first seq after the step's fn settled. */
  seqAfter?: number;
  decision?: ApprovalDecision;
  /** For a call a person edited (R-AP-9): wire text of the arguments the program asked for; `args` ran. */
  requestedArgs?: string;
  /** A call left under way (`executing`) and asked about again (`onInterrupted: "ask"`): it may have taken effect. */
  interrupted?: boolean;
  /**
   * How many times a person has been asked about this call: 1 when it first paused, one more each
   * time it is asked again. An answer names the pause it answers (`pauseIdOf`); absent is 1.
   */
  asked?: number;
  /** The grant (the seq that gave it) this call ran through before it was asked again: still spent. */
  grantSpent?: number;
  /** Rollback progress and failures (R-RB-4). */
  revertError?: string;
  /** Who rolled the call back, when and why (R-RB-1), on an entry that is `reverted`. */
  revert?: RevertRecord;
  startedAt: number;
  endedAt?: number;
}

export interface StoredResult {
  /** Wire text of the final result, or absent when it could not be kept. */
  result?: string;
  /** Why the result is not in the record (R-DV-2). */
  omitted?: string;
  logs?: string[];
  /** For a run that ended REPLAY_DIVERGENCE: what differed, as the outcome said (JSON-safe). */
  divergence?: Divergence;
}

/**
 * Who writes an execution: the holder of its lease, whose writes go to the store only while it
 * holds it (`ExecutionLease`). `plain` is the unchecked write, for a lock that cannot check the
 * lease and write in one store operation; `renew` asks such a lock for a renew first instead of
 * a validity check.
 */
export interface StoreWriter {
  write(
    batch: ReadonlyArray<{ key: string; value: string }>,
    plain: () => Promise<void>,
    options?: { renew?: boolean },
  ): Promise<void>;
}
