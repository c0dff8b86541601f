import type { ExecutionHead, StoredEntry } from "../../log/interface.js";
import type { ExecutionLease } from "../../log/lease.js";
import type { Divergence, ErrorCode } from "../../outcome.js";

// The types of a pass: what it starts from and how it ends. The runtime runs passes; telemetry
// observes them through these types alone.

export interface PassInput {
  /** Mutated: seqLimit grows as new calls are recorded. */
  head: ExecutionHead;
  code: string;
  /** Mutated: every entry this pass records lands here too. */
  log: Map<number, StoredEntry>;
  /** The execution's lease, held by this pass: checked before every effect, fenced before head writes. */
  lease: ExecutionLease;
}

/** How a pass ended: returned, paused for a person, or failed (console lines in each). */
export type PassEnd =
  | { kind: "completed"; resultText: string; logs: string[] }
  /** `pendingSeqs`: every call that waits for a person, in the order they paused (R-AP-8). */
  | { kind: "paused"; pendingSeqs: number[]; logs: string[] }
  | {
      kind: "error";
      code: ErrorCode;
      message: string;
      logs: string[];
      divergence?: Divergence;
      /**
       * The pass's sandbox host ended and this pass may not have been the cause (it shared the
       * host): it is run again, `"alone"` in a host of its own, or `"shared"` anywhere.
       */
      retry?: "alone" | "shared";
    }
  /** The program did not catch a denial (R-AP-9): the run ends `rejected` with its message. */
  | { kind: "denied"; message: string; logs: string[] }
  /**
   * The run was cancelled while the pass ran (`runtime.cancel`): it ends `rejected` with code
   * CANCELLED, and the calls that waited for a person in this pass are closed.
   */
  | { kind: "cancelled"; message: string; pendingSeqs: number[]; logs: string[] };
