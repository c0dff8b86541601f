import type { ExecutionHead, StoredEntry } from "../../log/interface.js";
import { ExecutionLease } from "../../log/lease.js";
import { CodemodeError, type Outcome } from "../../outcome.js";
import type { RuntimeContext } from "../context/index.js";
import { runLeasedPass } from "../passes/index.js";
import {
  afterTransition,
  asStorageError,
  currentCalls,
  failureOutcome,
  type PendingHooks,
} from "../transitions/index.js";

/** The one wording of BUSY for an execution whose lease someone else holds. */
export function busyMessage(executionId: string): string {
  return `execution ${executionId} is busy (a pass or another control operation holds it); try again`;
}

export interface ControlStepOptions<T> {
  /** What the operation does, for its STORAGE_ERROR: "could not <doing> execution <id>". */
  doing: string;
  /** How long to wait for a held lease. Default: the runtime's `lockWaitMs`. */
  waitMs?: number;
  /** The answer when the lease stays held. Default: rejects with `CodemodeError` BUSY. */
  busy?: () => T;
  /** The answer when the store fails. Default: rejects with `CodemodeError` STORAGE_ERROR (R-RT-3). */
  failed?: (error: unknown) => T;
}

/** What a step may do with the execution it holds: read it, write through its lease, change its status. */
export interface ControlStepScope {
  /** The head as read under the lease; undefined when there is no such execution. */
  readonly head: ExecutionHead | undefined;
  readonly lease: ExecutionLease;
  /** Records the hooks a named transition owes; they run once the lease is free. */
  owe(hooks: PendingHooks): void;
}

/**
 * The skeleton of a control operation (reject, delete, expire, rollback): takes the execution's
 * lease, reads its head, runs `step`, frees the lease once, then runs the hooks the step's
 * transition owes, and answers with the step's value. A lease that stays held is `busy`, a store
 * failure is `failed`; an outage is never reported as absence.
 */
export async function controlStep<T>(
  context: RuntimeContext,
  executionId: string,
  options: ControlStepOptions<T>,
  step: (scope: ControlStepScope) => Promise<T>,
): Promise<T> {
  let owed: PendingHooks;
  let value: T;
  try {
    const lease = await ExecutionLease.acquire(
      context.leases,
      executionId,
      options.waitMs ?? context.settings.lockWaitMs,
    );
    if (!lease) {
      if (options.busy) return options.busy();
      throw new CodemodeError("BUSY", busyMessage(executionId));
    }
    try {
      const head = await context.store.readHead(executionId);
      const owe = (hooks: PendingHooks): void => {
        owed = hooks;
      };
      value = await step({ head, lease, owe });
    } finally {
      await lease.release();
    }
  } catch (error) {
    if (options.failed) return options.failed(error);
    throw asStorageError(`could not ${options.doing} execution ${executionId}`, error);
  }
  await afterTransition(context, executionId, owed);
  return value;
}

/** Where a pass starts: the head, its code and its log as read under the lease. */
export interface PassStart {
  head: ExecutionHead;
  code: string;
  log: Map<number, StoredEntry>;
}

export interface HandOverOptions<R> {
  /** How long to wait for a held lease. Default: the runtime's `lockWaitMs`. */
  waitMs?: number;
  /** The answer when the lease stays held. Default (for an `Outcome`): `failed` with a BUSY error. */
  busy?: () => R | Promise<R>;
  /** The answer when the store fails. Default (for an `Outcome`): its outcome, with the log as it stands (R-RT-2). */
  failed?: (error: unknown) => R | Promise<R>;
}

/** An answer other than an `Outcome` has no default for a held lease or a failed store: both are given. */
type HandOverAnswers<R> = [R] extends [Outcome]
  ? HandOverOptions<R>
  : Required<Pick<HandOverOptions<R>, "busy" | "failed">> & HandOverOptions<R>;

/**
 * The hand-over of `execute`, `approve`, `recover`, `fork` and `rerun`: takes the execution's
 * lease and lets `prepare` check and ready the run under it. `prepare` either answers itself (a
 * refusal, nothing to do) and the lease is freed, or calls `start`, which hands the lease to a new
 * pass (`runLeasedPass` frees it), and answers what it makes of the pass's outcome. Always an
 * answer of type `R`, never a throw (R-RT-1).
 */
export async function handOver<R = Outcome>(
  context: RuntimeContext,
  executionId: string,
  options: HandOverAnswers<R>,
  prepare: (lease: ExecutionLease, start: (run: PassStart) => Promise<Outcome>) => Promise<R>,
): Promise<R> {
  const failed = async (error: unknown): Promise<R> =>
    options.failed
      ? options.failed(error)
      : (failureOutcome(executionId, error, await currentCalls(context, executionId)) as R);
  let lease: ExecutionLease | null;
  try {
    lease = await ExecutionLease.acquire(context.leases, executionId, options.waitMs ?? context.settings.lockWaitMs);
  } catch (error) {
    // R-RT-1: a lock on a store that is down is an outcome, not a throw.
    return failed(error);
  }
  if (!lease) return options.busy ? options.busy() : failed(new CodemodeError("BUSY", busyMessage(executionId)));
  const held = lease;
  let handedOver = false;
  const start = (run: PassStart): Promise<Outcome> => {
    handedOver = true;
    return runLeasedPass(context, run.head, run.code, run.log, held);
  };
  try {
    return await prepare(held, start);
  } catch (error) {
    return failed(error);
  } finally {
    if (!handedOver) await held.release();
  }
}
