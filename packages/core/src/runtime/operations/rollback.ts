import { errorMessage } from "../../error-message.js";
import { decodeDurable } from "../../log/durable-value.js";
import type { ExecutionHead, StoredEntry } from "../../log/interface.js";
import type { ExecutionLease } from "../../log/lease.js";
import { CodemodeError, type ErrorCode, type RollbackReport } from "../../outcome.js";
import type { RuntimeContext } from "../context/index.js";
import { rollBack } from "../transitions/index.js";
import { busyMessage, controlStep } from "./control-step.js";

export interface RollbackInput {
  executionId: string;
  /** Who rolls back, for the audit trail: kept on each reverted entry (up to 1,000 characters). */
  by?: string;
  /** Why (up to 1,000 characters). */
  reason?: string;
}

/** What a rollback works on, under the run's lease. */
interface RollbackState {
  head: ExecutionHead;
  log: Map<number, StoredEntry>;
  report: RollbackReport;
  lease: ExecutionLease;
}

const MAX_TEXT = 1_000;

/**
 * Walks applied connector calls from the highest seq down and asks the configured tool to revert
 * each (R-RB-1). Progress is written per entry, so a rollback that died midway continues and
 * never reverts an entry twice (R-RB-4); a failing revert does not stop the rest (R-RB-2). A
 * report, never a throw: a rollback that could not run says why in `code` and `error`.
 */
export async function rollback(context: RuntimeContext, input: RollbackInput): Promise<RollbackReport> {
  const executionId = String(input?.executionId ?? "");
  const by = typeof input?.by === "string" && input.by ? input.by.slice(0, MAX_TEXT) : undefined;
  const reason = typeof input?.reason === "string" && input.reason ? input.reason.slice(0, MAX_TEXT) : undefined;
  const report: RollbackReport = {
    executionId,
    ...(by !== undefined ? { by } : {}),
    status: "error",
    reverted: [],
    failed: [],
    skipped: [],
  };
  const refused = (code: ErrorCode, error: string): RollbackReport => ({ ...report, code, error });
  return controlStep(
    context,
    executionId,
    {
      doing: "roll back",
      busy: () => refused("BUSY", busyMessage(executionId)),
      failed: (error) => refused(CodemodeError.isInstance(error) ? error.code : "STORAGE_ERROR", errorMessage(error)),
    },
    async ({ head, lease, owe }) => {
      if (!head) return refused("NOT_FOUND", `no execution ${executionId}`);
      report.status = head.status;
      if (head.status === "running")
        return refused("BUSY", `execution ${executionId} is running; roll it back once it has stopped`);
      const { log } = await context.store.readCodeAndLog(head);
      await revertApplied(context, { head, log, report, lease }, { by, reason });
      // R-RB-3: rolled_back only when at least one call was reverted.
      const anyReverted = [...log.values()].some((entry) => entry.state === "reverted");
      if (anyReverted && head.status !== "rolled_back") {
        owe(await rollBack(context, lease, head, log));
        report.status = head.status;
      }
      return report;
    },
  );
}

async function revertApplied(
  context: RuntimeContext,
  { head, log, report, lease }: RollbackState,
  who: { by: string | undefined; reason: string | undefined },
): Promise<void> {
  const applied = [...log.values()]
    .filter((entry) => entry.state === "applied" && entry.connector !== "codemode")
    .sort((a, b) => b.seq - a.seq);
  for (const entry of applied) {
    const tool = context.connectors.get(entry.connector)?.tools[entry.method];
    if (!tool?.revert) {
      report.skipped.push(entry.seq);
      continue;
    }
    // Each revert is an effect: one whose lease was taken over must not run it.
    await lease.confirm();
    const revertContext = {
      executionId: head.id,
      seq: entry.seq,
      idempotencyKey: `${head.id}:${entry.seq}`,
      connector: entry.connector,
      method: entry.method,
    };
    try {
      await tool.revert(decodeDurable(entry.args) as never, decodeDurable(entry.result) as never, revertContext);
    } catch (error) {
      report.failed.push({ seq: entry.seq, error: errorMessage(error) });
      await context.store.writeEntries(lease, head.id, [{ ...entry, revertError: errorMessage(error) }]);
      continue;
    }
    const at = Date.now();
    const reverted: StoredEntry = {
      ...entry,
      state: "reverted",
      endedAt: at,
      revert: {
        at,
        ...(who.by !== undefined ? { by: who.by } : {}),
        ...(who.reason !== undefined ? { reason: who.reason } : {}),
      },
    };
    delete reverted.revertError;
    await context.store.writeEntries(lease, head.id, [reverted]);
    log.set(entry.seq, reverted);
    report.reverted.push(entry.seq);
  }
}
