import { errorMessage } from "../../error-message.js";
import { decodeDurable, MAX_DURABLE_CHARS } from "../../log/durable-value.js";
import type { ExecutionHead, StoredEntry } from "../../log/interface.js";
import type { ExecutionLease } from "../../log/lease.js";
import { CodemodeError, type Divergence, errorOutcome, type Outcome } from "../../outcome.js";
import type { RuntimeContext } from "../context/index.js";
import type { PassEnd } from "../records/index.js";
import { toLogEntries } from "../records/index.js";
import {
  afterTransition,
  complete,
  endCancelled,
  endDenied,
  fail,
  failureOutcome,
  type PendingHooks,
  pause,
} from "../transitions/index.js";
import { pendingActionOf } from "./pending-view.js";
import { runPass } from "./run-pass.js";

/**
 * Runs a pass of an execution whose lease the caller hands over, records how it ended, frees the
 * lease and runs the hooks the change owes. Always resolves to an outcome (R-RT-1).
 */
export async function runLeasedPass(
  context: RuntimeContext,
  head: ExecutionHead,
  code: string,
  log: Map<number, StoredEntry>,
  lease: ExecutionLease,
): Promise<Outcome> {
  try {
    head.passes += 1;
    const end = await context.telemetry.pass(head, log, () => runPass(context, { head, code, log, lease }));
    let held: boolean;
    try {
      held = await lease.hold();
    } catch (error) {
      // The store failed while checking the lease: nothing more can be recorded. The run stays
      // `running` under a lease that will lapse, so it can be recovered or expired (R-ST-5).
      const cause =
        end.kind === "error" && end.code === "STORAGE_ERROR" ? new CodemodeError("STORAGE_ERROR", end.message) : error;
      return failureOutcome(head.id, cause, log, end.logs);
    }
    if (!held) return failureOutcome(head.id, lease.takenOver(), log);
    const { outcome, hooks } = await settle(context, lease, head, log, end);
    await lease.release();
    // Hooks run once the record is written and the lease is free; they keep no instance memory.
    await afterTransition(context, head.id, hooks);
    return outcome;
  } catch (error) {
    return failureOutcome(head.id, error, log);
  } finally {
    await lease.release();
  }
}

/**
 * Writes the end of a pass (R-DV-2: the final result is kept only when it fits) and builds its
 * outcome, with the hooks the change owes (none when it could not be written).
 */
async function settle(
  context: RuntimeContext,
  lease: ExecutionLease,
  head: ExecutionHead,
  log: Map<number, StoredEntry>,
  end: PassEnd,
): Promise<{ outcome: Outcome; hooks?: PendingHooks }> {
  const logs = end.logs.length > 0 ? { logs: end.logs } : {};
  try {
    if (end.kind === "paused") {
      const hooks = await pause(context, lease, head, end.pendingSeqs);
      const pending = end.pendingSeqs.flatMap((seq) => {
        const entry = log.get(seq);
        return entry ? [pendingActionOf(context, head.id, entry)] : [];
      });
      const outcome: Outcome = { status: "paused", executionId: head.id, pending, ...logs, calls: toLogEntries(log) };
      return { outcome, hooks };
    }
    if (end.kind === "denied") {
      // R-AP-9: an uncaught denial ends the run as `reject` would, with the denial's message.
      const hooks = await endDenied(context, lease, head, end.message, logs);
      const outcome = errorOutcome(head.id, "APPROVAL_DENIED", `execution ${head.id} was rejected: ${end.message}`, {
        ...logs,
        calls: toLogEntries(log),
      });
      return { outcome, hooks };
    }
    if (end.kind === "cancelled") {
      const hooks = await endCancelled(context, lease, head, end.message, {
        log,
        pendingSeqs: end.pendingSeqs,
        result: logs,
      });
      const outcome = errorOutcome(head.id, "CANCELLED", `execution ${head.id} was ${end.message}`, {
        ...logs,
        calls: toLogEntries(log),
      });
      return { outcome, hooks };
    }
    if (end.kind === "error") {
      const divergence = end.divergence ? { divergence: end.divergence } : {};
      const kept = end.divergence ? storable(end.divergence) : undefined;
      const hooks = await fail(
        context,
        lease,
        head,
        { message: end.message, code: end.code },
        { ...logs, ...(kept ? { divergence: kept } : {}) },
      );
      const outcome = errorOutcome(head.id, end.code, end.message, {
        ...logs,
        calls: toLogEntries(log),
        ...divergence,
      });
      return { outcome, hooks };
    }
    const kept =
      end.resultText.length <= MAX_DURABLE_CHARS
        ? { result: end.resultText }
        : {
            omitted: `the result was ${end.resultText.length.toLocaleString("en")} characters once serialized; only results up to ${MAX_DURABLE_CHARS.toLocaleString("en")} are kept in the record`,
          };
    const hooks = await complete(context, lease, head, { ...kept, ...logs });
    // Transformed before the logs are handed out: a transform failure adds a line to them.
    const result = transformForModel(context, decodeDurable(end.resultText), end.logs);
    const outcome: Outcome = {
      status: "completed",
      executionId: head.id,
      result,
      ...(end.logs.length > 0 ? { logs: end.logs } : {}),
      calls: toLogEntries(log),
    };
    return { outcome, hooks };
  } catch (error) {
    return { outcome: failureOutcome(head.id, error, log, end.logs) };
  }
}

/** A divergence as the record keeps it: plain JSON (a bigint as text), or nothing when it is not. */
function storable(divergence: Divergence): Divergence | undefined {
  try {
    return JSON.parse(
      JSON.stringify(divergence, (_key, value: unknown) => (typeof value === "bigint" ? `${value}n` : value)),
    ) as Divergence;
  } catch {
    return undefined;
  }
}

/**
 * R-DV-3: the model gets the transformed value; the record keeps the raw one. A transform that
 * throws gives the raw value and says so in `logs`.
 */
export function transformForModel(context: RuntimeContext, raw: unknown, logs: string[]): unknown {
  if (!context.transformResult) return raw;
  try {
    return context.transformResult(raw);
  } catch (error) {
    logs.push(`[error] transformResult threw (${errorMessage(error)}); the model gets the raw result`);
    return raw;
  }
}
