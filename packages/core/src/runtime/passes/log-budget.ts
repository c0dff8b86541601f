import type { ExecutionHead, StoredEntry } from "../../log/interface.js";
import { CodemodeError } from "../../outcome.js";

/** The budget of one execution's log (`limits.maxLogBytes`, `limits.maxLogEntries`). */
export interface LogLimits {
  maxLogBytes: number;
  maxLogEntries: number;
}

/**
 * The head as the budget keeps it: the running totals of the log ride on the execution head, so
 * they are written with it and cross passes and processes. The log itself stays the truth: each
 * pass starts from the entries it loaded (a host that died mid-pass never wrote its last totals).
 */
export type BudgetedHead = ExecutionHead & { logBytes?: number; logEntries?: number };

/** What one stored entry costs: the UTF-8 size of its texts, plus room for its fields. */
export function entryBytes(entry: StoredEntry): number {
  return (
    Buffer.byteLength(entry.args) +
    (entry.result === undefined ? 0 : Buffer.byteLength(entry.result)) +
    (entry.error === undefined ? 0 : Buffer.byteLength(entry.error)) +
    ENTRY_OVERHEAD_BYTES
  );
}

/** Bytes counted per entry for its other fields (seq, names, state, times). */
const ENTRY_OVERHEAD_BYTES = 256;

/**
 * A per-execution write quota, counted across passes. A program that records in a loop
 * (`codemode.step` with 1 MB values wrote 434 MB to the store in 5 s) ends with
 * VALUE_TOO_LARGE once its log would pass `maxLogBytes` or `maxLogEntries`. Checked before
 * anything new is written or run; the result of a call that already ran is always recorded (an
 * effect is never left out of the log), and then the pass ends.
 */
export class LogBudget {
  private bytes = 0;
  private entries = 0;

  constructor(
    private readonly head: BudgetedHead,
    log: ReadonlyMap<number, StoredEntry>,
    private readonly limits: LogLimits,
  ) {
    for (const entry of log.values()) this.bytes += entryBytes(entry);
    this.entries = log.size;
    this.publish();
  }

  /**
   * Undefined when a new entry of about `bytes` fits, else the error that ends the pass. Called
   * before a new call or step writes anything.
   */
  refusal(bytes: number): CodemodeError | undefined {
    if (this.entries + 1 > this.limits.maxLogEntries) {
      return new CodemodeError(
        "VALUE_TOO_LARGE",
        `the execution's log would have more than ${this.limits.maxLogEntries.toLocaleString("en")} entries (limits.maxLogEntries): ${ADVICE}`,
      );
    }
    return this.overBytes(bytes + ENTRY_OVERHEAD_BYTES);
  }

  /** Undefined while the log is within `maxLogBytes`, else the error that ends the pass. */
  exceeded(): CodemodeError | undefined {
    return this.overBytes(0);
  }

  /** Counts an entry about to be written over `previous` (the one at its seq, if any). */
  account(entry: StoredEntry, previous: StoredEntry | undefined): void {
    this.bytes += entryBytes(entry) - (previous ? entryBytes(previous) : 0);
    if (!previous) this.entries += 1;
    this.publish();
  }

  private overBytes(more: number): CodemodeError | undefined {
    if (this.bytes + more <= this.limits.maxLogBytes) return undefined;
    return new CodemodeError(
      "VALUE_TOO_LARGE",
      `the execution's log would pass ${this.limits.maxLogBytes.toLocaleString("en")} bytes (limits.maxLogBytes; ${this.bytes.toLocaleString("en")} recorded so far): ${ADVICE}`,
    );
  }

  private publish(): void {
    this.head.logBytes = this.bytes;
    this.head.logEntries = this.entries;
  }
}

const ADVICE =
  "record less per execution (keep large data elsewhere and pass a reference, record fewer steps), or raise the limit in the runtime's options";
