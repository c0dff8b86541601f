import type { Connector } from "../connectors/define-connector.js";
import { decodeDurable } from "../log/durable-value.js";
import type { ExecutionHead, ExecutionStore, IndexItem, StoredEntry } from "../log/execution-store.js";
import type { Lease, LockProvider } from "../log/lock.js";
import { CodemodeError, type ExecutionEndStatus, type ExecutionStatus, type RollbackReport } from "../outcome.js";

/** What lifecycle operations share with the runtime handle. */
export interface LifecycleContext {
  store: ExecutionStore;
  lock: LockProvider;
  connectors: ReadonlyMap<string, Connector>;
  leaseMs: number;
  lockWaitMs: number;
  updateIndex(change: (items: IndexItem[]) => IndexItem[]): Promise<void>;
  warn(message: string): void;
}

const TERMINAL: ReadonlySet<ExecutionStatus> = new Set(["completed", "error", "rejected", "rolled_back"]);

export function isTerminal(status: ExecutionStatus): status is ExecutionEndStatus {
  return TERMINAL.has(status);
}

/**
 * R-RS-1: every configured connector's `onPassEnd` after every pass; on a terminal pass it runs
 * before `disposeExecution`. R-RS-3: errors are swallowed and logged; hooks keep no instance memory.
 */
export async function runPassEndHooks(context: LifecycleContext, executionId: string, status: "paused" | ExecutionEndStatus): Promise<void> {
  for (const connector of context.connectors.values()) {
    if (!connector.onPassEnd) continue;
    try {
      await connector.onPassEnd(executionId, status);
    } catch (error) {
      context.warn(`onPassEnd of connector "${connector.name}" threw for execution ${executionId}: ${describe(error)}`);
    }
  }
  if (status !== "paused") await runDisposeHooks(context, executionId, status);
}

/** R-RS-2: every configured connector's `disposeExecution` when an execution becomes terminal. */
export async function runDisposeHooks(context: LifecycleContext, executionId: string, status: ExecutionEndStatus): Promise<void> {
  for (const connector of context.connectors.values()) {
    if (!connector.disposeExecution) continue;
    try {
      await connector.disposeExecution(executionId, status);
    } catch (error) {
      context.warn(`disposeExecution of connector "${connector.name}" threw for execution ${executionId}: ${describe(error)}`);
    }
  }
}

/**
 * Mirrors a status change into the execution index. The head is the truth and is written
 * first; the index only serves listings (pending, executions, retention), so a busy or failing
 * index must not turn a change that happened into an error. It is reported and left.
 */
export async function setIndexStatus(context: LifecycleContext, head: ExecutionHead): Promise<void> {
  try {
    await context.updateIndex((items) => items.map((item) => (item.id === head.id ? { ...item, status: head.status, updatedAt: head.updatedAt } : item)));
  } catch (error) {
    context.warn(`execution ${head.id} is ${head.status}, but the execution index could not be updated: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** Runs `operation` holding the execution's lease, or returns null when it stayed busy. */
export async function withExecutionLease<T>(context: LifecycleContext, executionId: string, waitMs: number, operation: (lease: Lease) => Promise<T>): Promise<T | null> {
  const lease = await context.lock.acquire(context.store.keys.lock(executionId), { ttlMs: context.leaseMs, waitMs });
  if (!lease) return null;
  // Renewed while the operation runs (reverts and hooks can take longer than a lease).
  const renewal = setInterval(() => void lease.renew(context.leaseMs).catch(() => undefined), context.leaseMs / 3);
  try {
    return await operation(lease);
  } finally {
    clearInterval(renewal);
    await lease.release().catch(() => undefined);
  }
}

/**
 * Walks applied connector calls from the highest seq down and asks the configured tool to
 * revert each (R-RB-1). Progress is written per entry, so a rollback that died midway continues
 * and never reverts an entry twice (R-RB-4); a failing revert does not stop the rest (R-RB-2).
 */
export async function rollbackExecution(context: LifecycleContext, executionId: string): Promise<RollbackReport> {
  const report: RollbackReport = { executionId, status: "error", reverted: [], failed: [], skipped: [] };
  try {
    const done = await withExecutionLease(context, executionId, context.lockWaitMs, async () => {
      const head = await context.store.readHead(executionId);
      if (!head) return { ...report, code: "NOT_FOUND" as const, error: `no execution ${executionId}` };
      report.status = head.status;
      if (head.status === "running") return { ...report, code: "BUSY" as const, error: `execution ${executionId} is running; roll it back once it has stopped` };
      const { log } = await context.store.readCodeAndLog(head);
      const applied = [...log.values()].filter((entry) => entry.state === "applied" && entry.connector !== "codemode").sort((a, b) => b.seq - a.seq);
      for (const entry of applied) {
        const tool = context.connectors.get(entry.connector)?.tools[entry.method];
        if (!tool?.revert) {
          report.skipped.push(entry.seq);
          continue;
        }
        const revertContext = { executionId, seq: entry.seq, idempotencyKey: `${executionId}:${entry.seq}`, connector: entry.connector, method: entry.method };
        try {
          await tool.revert(decodeDurable(entry.args) as never, decodeDurable(entry.result) as never, revertContext);
        } catch (error) {
          report.failed.push({ seq: entry.seq, error: describe(error) });
          await context.store.writeEntry(executionId, { ...entry, revertError: describe(error) });
          continue;
        }
        const reverted: StoredEntry = { ...entry, state: "reverted", endedAt: Date.now() };
        delete reverted.revertError;
        await context.store.writeEntry(executionId, reverted);
        log.set(entry.seq, reverted);
        report.reverted.push(entry.seq);
      }
      const anyReverted = [...log.values()].some((entry) => entry.state === "reverted");
      // R-RB-3: rolled_back only when at least one call was reverted.
      if (anyReverted && head.status !== "rolled_back") {
        // A paused run rolled back can never be approved: its pending action ends with it.
        const pendingEntry = head.pendingSeq === undefined ? undefined : log.get(head.pendingSeq);
        if (pendingEntry?.state === "pending") {
          await context.store.writeEntry(executionId, { ...pendingEntry, state: "error", error: "rolled back before approval", endedAt: Date.now() });
        }
        head.status = "rolled_back";
        head.updatedAt = Date.now();
        delete head.pendingSeq;
        await context.store.writeHead(head);
        await setIndexStatus(context, head);
        report.status = head.status;
        await runDisposeHooks(context, executionId, "rolled_back");
      }
      return report;
    });
    return done ?? { ...report, code: "BUSY", error: `execution ${executionId} is busy; try the rollback again` };
  } catch (error) {
    return { ...report, code: CodemodeError.isInstance(error) ? error.code : "STORAGE_ERROR", error: describe(error) };
  }
}

/**
 * R-RE-1: removes terminal executions beyond the newest `keep`, with their logs. `index` is the
 * index as the caller just wrote it, when it has it; otherwise the index is read.
 */
export async function pruneTerminal(context: LifecycleContext, keep: number, index?: readonly IndexItem[]): Promise<number> {
  const terminal = (index ?? (await context.store.readIndex())).filter((item) => isTerminal(item.status));
  const doomed = terminal.slice(Math.max(0, Math.floor(keep)));
  const removed = new Set<string>();
  for (const item of doomed) {
    // Under the execution's lease, so a rollback running on it finishes first; one that stays
    // busy is left for the next prune.
    const deleted = await withExecutionLease(context, item.id, 0, async () => {
      const head = await context.store.readHead(item.id);
      if (head && !isTerminal(head.status)) return false;
      if (head) await context.store.deleteExecution(head);
      return true;
    });
    if (deleted) removed.add(item.id);
  }
  if (removed.size > 0) await context.updateIndex((items) => items.filter((item) => !removed.has(item.id)));
  return removed.size;
}

/**
 * R-RE-2: paused executions last changed before the cutoff become `rejected`; running ones
 * whose host is gone (no live lease) become `error`; each is disposed.
 */
export async function expireStale(context: LifecycleContext, maxAgeMs: number): Promise<string[]> {
  const cutoff = Date.now() - maxAgeMs;
  const candidates = (await context.store.readIndex()).filter(
    (item) => (item.status === "paused" && item.updatedAt < cutoff) || item.status === "running",
  );
  const expired: string[] = [];
  for (const item of candidates) {
    if (item.status === "running" && (await context.lock.isHeld(context.store.keys.lock(item.id)))) continue;
    const ended = await withExecutionLease(context, item.id, 0, async () => {
      const head = await context.store.readHead(item.id);
      if (!head) return undefined;
      const now = Date.now();
      if (head.status === "paused" && head.updatedAt < cutoff) {
        if (head.pendingSeq !== undefined) {
          const [entry] = await context.store.readEntries(head.id, [head.pendingSeq]);
          if (entry?.state === "pending") await context.store.writeEntry(head.id, { ...entry, state: "error", error: "expired while waiting for approval", endedAt: now });
        }
        head.status = "rejected";
        head.error = "expired while waiting for approval";
      } else if (head.status === "running") {
        head.status = "error";
        head.errorCode = "SANDBOX_ERROR";
        head.error = "the host running this execution went away (its lease lapsed)";
      } else {
        return undefined;
      }
      head.updatedAt = now;
      delete head.pendingSeq;
      await context.store.writeHead(head);
      await setIndexStatus(context, head);
      return head.status as ExecutionEndStatus;
    });
    if (ended) {
      await runDisposeHooks(context, item.id, ended);
      expired.push(item.id);
    }
  }
  return expired;
}

/** R-RE-3: deletes an execution and its log; a non-terminal one is disposed first. */
export async function deleteOne(context: LifecycleContext, executionId: string): Promise<boolean | "busy"> {
  const result = await withExecutionLease(context, executionId, context.lockWaitMs, async () => {
    const head = await context.store.readHead(executionId);
    if (!head) return false;
    if (!isTerminal(head.status)) await runDisposeHooks(context, executionId, head.status === "paused" ? "rejected" : "error");
    await context.store.deleteExecution(head);
    await context.updateIndex((items) => items.filter((item) => item.id !== executionId));
    return true;
  });
  return result ?? "busy";
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
