import type { ExecutionHead } from "../../log/interface.js";
import { ERROR_CODES, type ErrorCode, type Outcome } from "../../outcome.js";
import type { RuntimeContext } from "../context/index.js";
import { failureOutcome, missingConnectors, runAgain } from "../transitions/index.js";
import { busyMessage, handOver } from "./control-step.js";
import { checkRunQuery, type RunQuery, readStore, selectRuns } from "./select-runs.js";

/** Which failed runs `rerun` takes: by default those a store or a lease failed, not their program. */
export interface RerunQuery extends RunQuery {
  /** Only `"error"`: runs that failed. */
  status?: "error";
  /**
   * The error codes to run again. Default `STORAGE_ERROR` and `BUSY`: the store or a lease failed
   * the run, not its program. `SYNTAX_ERROR` is refused: the same code fails the same way; fork
   * it with new code. `SANDBOX_CRASHED` is taken only when listed here, even for one
   * `executionId`: its program crashed a sandbox process, and may again (R-SB-8, no poison runs).
   */
  codes?: readonly ErrorCode[];
  /** Only this execution (any code but `SYNTAX_ERROR` unless `codes` says otherwise); no other filter applies. */
  executionId?: string;
  /** Picks and checks the runs, but runs nothing and changes nothing. */
  dryRun?: boolean;
}

/** What became of one failed run. */
export interface RerunResult {
  executionId: string;
  /** The failure the run was picked for, as recorded (SANDBOX_ERROR when the record has no code). */
  failed: { code: ErrorCode; error: string };
  /**
   * `rerun`: a new pass ran, `outcome` is how it ended; `would-rerun`: a dry run found it ready;
   * `skipped`: it was left as it was, `reason` says why (it changed meanwhile, another process
   * holds it, a connector it uses is not configured here, there is no such execution).
   */
  action: "rerun" | "would-rerun" | "skipped";
  outcome?: Outcome;
  reason?: { code: ErrorCode; message: string };
}

export interface RerunReport {
  dryRun: boolean;
  results: RerunResult[];
}

const DEFAULT_CODES: readonly ErrorCode[] = ["STORAGE_ERROR", "BUSY"];
/** Codes a rerun would fail the same way again: the code is what is wrong. */
const NEVER: ReadonlySet<ErrorCode> = new Set(["SYNTAX_ERROR"]);
/**
 * Codes a rerun takes only when asked by name: a program that crashed its sandbox process may
 * crash the next one, so nothing runs it again by itself (R-SB-8).
 */
const ONLY_BY_NAME: ReadonlySet<ErrorCode> = new Set(["SANDBOX_CRASHED"]);

/**
 * Runs failed executions again, each as a new pass of its own run: under its lease, the run goes
 * from `error` back to `running` (`runAgain`: the failure is kept in `reruns`), then the pass
 * replays what was recorded and runs the rest live under the usual approvals; a call the failed
 * pass left `executing` runs again with the same idempotency key (R-RP-4). The log is never
 * rewritten: a recorded tool error replays as the same rejection (R-CON-3), so a run its program
 * failed ends the same way again; fork such a run from the failed call's seq instead.
 *
 * Each run is reported: its outcome, or why it was skipped. A run picked but held by another
 * process, changed meanwhile, or missing a connector is skipped and keeps its state. A store
 * failure while listing rejects with STORAGE_ERROR (R-RT-3); one met for a run is its outcome.
 */
export async function rerun(context: RuntimeContext, query: RerunQuery = {}): Promise<RerunReport> {
  const { codes, dryRun, executionId } = checkQuery(query);
  const keep = (head: ExecutionHead) => codes.has(head.errorCode ?? "SANDBOX_ERROR");
  let heads: Array<ExecutionHead | string>;
  if (executionId !== undefined)
    heads = [
      (await readStore(`could not read execution ${executionId}`, () => context.store.readHead(executionId))) ??
        executionId,
    ];
  else heads = await selectRuns(context, checkRunQuery("rerun", query, "error", ["error"]), keep);
  const results: RerunResult[] = new Array(heads.length);
  let next = 0;
  const lane = async () => {
    while (next < heads.length) {
      const position = next++;
      results[position] = await rerunOne(context, heads[position] as ExecutionHead | string, keep, dryRun);
    }
  };
  // Side by side, as many as may run at once; the pass gate admits them.
  const lanes = Math.max(1, Math.min(heads.length, context.settings.maxPassesInFlight));
  await Promise.all(Array.from({ length: lanes }, lane));
  return { dryRun, results };
}

function checkQuery(query: RerunQuery): { codes: Set<ErrorCode>; dryRun: boolean; executionId?: string } {
  if (typeof query !== "object" || query === null)
    throw new TypeError("rerun(query): query must be { status?, codes?, since?, limit?, executionId?, dryRun? }");
  const { executionId } = query;
  if (executionId !== undefined && (typeof executionId !== "string" || executionId === ""))
    throw new TypeError("rerun: executionId must be a non-empty string when given");
  if (query.dryRun !== undefined && typeof query.dryRun !== "boolean")
    throw new TypeError("rerun: dryRun must be a boolean when given");
  if (query.codes !== undefined && (!Array.isArray(query.codes) || query.codes.length === 0))
    throw new TypeError("rerun: codes must be a non-empty array of error codes when given");
  const asked =
    query.codes ??
    (executionId !== undefined
      ? ERROR_CODES.filter((code) => !NEVER.has(code) && !ONLY_BY_NAME.has(code))
      : DEFAULT_CODES);
  for (const code of asked) {
    if (!(ERROR_CODES as readonly string[]).includes(code))
      throw new TypeError(`rerun: codes must be error codes (${ERROR_CODES.join(", ")}); got ${String(code)}`);
    if (NEVER.has(code))
      throw new TypeError(
        `rerun: ${code} runs fail the same way again; fork them with new code (runtime.fork({ executionId, fromSeq: 0, code }))`,
      );
  }
  return {
    codes: new Set(asked),
    dryRun: query.dryRun === true,
    ...(executionId !== undefined ? { executionId } : {}),
  };
}

/** One run: checked again under its lease, moved back to running and handed to a new pass. */
async function rerunOne(
  context: RuntimeContext,
  picked: ExecutionHead | string,
  keep: (head: ExecutionHead) => boolean,
  dryRun: boolean,
): Promise<RerunResult> {
  if (typeof picked === "string")
    return skipped(picked, { code: "SANDBOX_ERROR", error: "" }, "NOT_FOUND", `there is no execution ${picked}`);
  const executionId = picked.id;
  const failed = { code: picked.errorCode ?? ("SANDBOX_ERROR" as const), error: picked.error ?? "" };
  const refused = (head: ExecutionHead | undefined): RerunResult | undefined => {
    if (!head) return skipped(executionId, failed, "NOT_FOUND", `execution ${executionId} was deleted`);
    if (head.status !== "error")
      return skipped(executionId, failed, "NOT_PAUSED", `execution ${executionId} is ${head.status}, no longer failed`);
    if (!keep(head))
      return skipped(
        executionId,
        failed,
        "NOT_PAUSED",
        ONLY_BY_NAME.has(head.errorCode ?? "SANDBOX_ERROR")
          ? `execution ${executionId} failed with ${head.errorCode}: its program crashed a sandbox process and may again, so it runs again only when that code is asked for (codes: ["${head.errorCode}"])`
          : `execution ${executionId} failed with ${head.errorCode ?? "SANDBOX_ERROR"}, which this rerun does not take`,
      );
    return undefined;
  };
  const first = refused(picked);
  if (first) return first;
  // Under the lease: the run must be as it was picked, or another process reran it meanwhile
  // (and it may have failed again with a code this rerun takes).
  const changed = (head: ExecutionHead | undefined): RerunResult | undefined =>
    refused(head) ??
    (head && head.updatedAt !== picked.updatedAt
      ? skipped(
          executionId,
          failed,
          "NOT_PAUSED",
          `execution ${executionId} changed since it was picked; run rerun again`,
        )
      : undefined);
  if (dryRun) {
    try {
      const { log } = await context.store.readCodeAndLog(picked);
      const missing = missingConnectors(context, picked, log, "; rerun it from a runtime that has them");
      if (missing) return skipped(executionId, failed, missing.code, missing.message);
      return { executionId, failed, action: "would-rerun" };
    } catch (error) {
      const outcome = failureOutcome(executionId, error);
      return skipped(executionId, failed, outcome.code, outcome.error);
    }
  }
  const options = {
    waitMs: 0,
    busy: () => skipped(executionId, failed, "BUSY", busyMessage(executionId)),
    // The store failed before the run was handed to a pass: it stays as it was.
    failed: (error: unknown) => {
      const { code, error: message } = failureOutcome(executionId, error);
      return skipped(executionId, failed, code, message);
    },
  };
  return handOver<RerunResult>(context, executionId, options, async (lease, start) => {
    // Read again under the lease: another process may have rerun or deleted it since it was picked.
    const head = await context.store.readHead(executionId);
    const moved = changed(head);
    if (moved || !head)
      return moved ?? skipped(executionId, failed, "NOT_FOUND", `execution ${executionId} was deleted`);
    const { code, log } = await context.store.readCodeAndLog(head);
    const missing = missingConnectors(context, head, log, "; rerun it from a runtime that has them");
    if (missing) return skipped(executionId, failed, missing.code, missing.message);
    await runAgain(context, lease, head);
    return { executionId, failed, action: "rerun", outcome: await start({ head, code, log }) };
  });
}

function skipped(executionId: string, failed: RerunResult["failed"], code: ErrorCode, message: string): RerunResult {
  return { executionId, failed, action: "skipped", reason: { code, message } };
}
