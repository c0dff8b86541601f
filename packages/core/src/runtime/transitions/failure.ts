import { errorMessage } from "../../error-message.js";
import type { StoredEntry } from "../../log/interface.js";
import { CodemodeError, type ErrorCode, type ErrorOutcome, errorOutcome, type LogEntry } from "../../outcome.js";
import type { RuntimeContext } from "../context/index.js";
import { toLogEntries } from "../records/index.js";

/** An error outcome for a failure met inside an operation: its own code, else SANDBOX_ERROR. */
export function failureOutcome(
  executionId: string,
  error: unknown,
  log?: ReadonlyMap<number, StoredEntry> | LogEntry[],
  logs?: string[],
): ErrorOutcome {
  const code: ErrorCode = CodemodeError.isInstance(error) ? error.code : "SANDBOX_ERROR";
  const message = errorMessage(error);
  const extra: { logs?: string[]; calls?: LogEntry[] } = {};
  if (logs) extra.logs = logs;
  if (log) extra.calls = Array.isArray(log) ? log : toLogEntries(log as ReadonlyMap<number, StoredEntry>);
  return errorOutcome(executionId, code, message, extra);
}

/** The log as it stands, read without the lease, for an outcome that could not take it (R-RT-2). */
export async function currentCalls(context: RuntimeContext, executionId: string): Promise<LogEntry[]> {
  try {
    const head = await context.store.readHead(executionId);
    return head ? toLogEntries((await context.store.readCodeAndLog(head)).log) : [];
  } catch {
    // The outcome already says what failed; the log is a courtesy here.
    return [];
  }
}

export { asStorageError } from "../../log/storage-error.js";
