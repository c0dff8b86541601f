import type { ExecutionState, Outcome } from "@codemode/core";
import type { PassLoad, RollbackReport } from "@codemode/core/operations";
import type { Command } from "commander";
import { CliError, exitCodeOf, storeUnreachable, unknownExecution } from "../cli-error.js";
import { type CommandContext, duration, wholeNumber } from "../command-context.js";
import { EXIT_CODES } from "../exit-codes.js";
import { Progress } from "../output/progress.js";
import { defaultOperator, printOutcome } from "./decide.js";
import { onExecution, type Register } from "./register.js";

/** `rollback`, `prune`, `expire` and `recover`: what an operator runs to tidy up and to resume. */
export function registerMaintenance(program: Command, register: Register): void {
  register(
    program
      .command("rollback")
      .description("revert the run's applied calls, newest first, with each tool's revert")
      .argument("<id>", "the execution id")
      .option("--by <name>", "who rolls back, kept on each reverted call (default: your user name)")
      .option("--reason <text>", "why, kept beside it"),
    onExecution(rollback),
  );
  register(
    program
      .command("prune")
      .description("delete finished executions beyond the newest --keep, with their logs")
      .option("--keep <n>", "finished executions to keep", "50"),
    (options: { keep: string }) => (context) => prune(context, wholeNumber(options.keep, "--keep") ?? 50),
  );
  register(
    program
      .command("expire")
      .description("end paused runs older than --max-age (rejected) and running runs whose host is gone (error)")
      .option("--max-age <duration>", "how long a run may wait for approval: 30m, 24h, 7d", "24h"),
    (options: { maxAge: string }) => (context) => expire(context, duration(options.maxAge, "--max-age")),
  );
  register(
    program
      .command("recover")
      .description("resume running executions whose host died (their lease lapsed), each with a new pass")
      .argument("[id]", "only this execution"),
    (_options: object, executionId?: string) => (context) => recover(context, executionId),
  );
}

async function rollback(
  { runtime, out }: CommandContext,
  executionId: string,
  options: { by?: string; reason?: string },
) {
  const progress = new Progress(`rolling back ${executionId}`, out.stderr);
  const by = options.by ?? defaultOperator();
  let report: RollbackReport;
  try {
    report = await runtime.rollback({ executionId, by, ...(options.reason ? { reason: options.reason } : {}) });
  } finally {
    progress.done();
  }
  if (report.code === "NOT_FOUND") throw unknownExecution(executionId);
  if (report.code === "STORAGE_ERROR") throw storeUnreachable(report.error ?? "the store failed");
  if (report.code) throw new CliError(exitCodeOf(report.code), `${report.error ?? report.code}`, report.code);
  if (out.json) out.document(report);
  else {
    const seqs = (list: number[]) => list.map((seq) => `seq ${seq}`).join(", ");
    if (report.reverted.length > 0)
      out.line(`Rolled back ${executionId}: reverted ${seqs(report.reverted)}; the run is ${report.status}.`);
    else out.line(`Nothing was reverted in ${executionId}; the run stays ${report.status}.`);
    if (report.skipped.length > 0) out.line(`Skipped (no revert configured): ${seqs(report.skipped)}`);
    for (const failure of report.failed)
      out.line(out.paint(`Failed to revert seq ${failure.seq}: ${failure.error}`, "red"));
    if (report.failed.length > 0) out.hint(`Run codemode rollback ${executionId} again to retry the failed reverts.`);
  }
  return report.failed.length > 0 ? EXIT_CODES.runFailed : EXIT_CODES.ok;
}

async function prune({ runtime, out }: CommandContext, keep: number) {
  const progress = new Progress(`pruning finished executions beyond the newest ${keep}`, out.stderr);
  let removed = 0;
  try {
    // The runtime removes at most 100 per call, so a long history takes several rounds.
    for (;;) {
      const round = await runtime.pruneExecutions(keep);
      removed += round;
      progress.update(`${removed} removed`);
      if (round === 0) break;
    }
  } finally {
    progress.done();
  }
  if (out.json) out.document({ removed, keep });
  else out.line(`Removed ${removed} finished execution${removed === 1 ? "" : "s"}; kept the newest ${keep}.`);
  return EXIT_CODES.ok;
}

async function expire({ runtime, out }: CommandContext, maxAgeMs: number) {
  const progress = new Progress("expiring stale runs", out.stderr);
  let expired: string[];
  try {
    expired = await runtime.expirePaused({ maxAgeMs });
  } finally {
    progress.done();
  }
  if (out.json) out.document({ expired, maxAgeMs });
  else if (expired.length === 0) out.line("Nothing to expire.");
  else {
    out.line(`Expired ${expired.length} run${expired.length === 1 ? "" : "s"}:`);
    for (const id of expired) out.line(`  ${id}`);
  }
  return EXIT_CODES.ok;
}

async function recover({ runtime, out }: CommandContext, executionId: string | undefined) {
  const ids = executionId ? [executionId] : await runningIds(runtime, out);
  const progress = new Progress("recovering", out.stderr);
  // Recovered side by side; the runtime's `maxPassesInFlight` bounds the passes, and the progress
  // line shows how many run and how many wait for a place.
  const found: Outcome[][] = ids.map(() => []);
  let next = 0;
  let done = 0;
  const show = () => progress.update(`${done}/${ids.length} done · ${passLoad(runtime.load())}`);
  const ticker = setInterval(show, 250);
  ticker.unref();
  try {
    const lane = async () => {
      while (next < ids.length) {
        const position = next++;
        found[position] = await runtime.recover({ executionId: ids[position]! });
        done++;
        show();
      }
    };
    await Promise.all(Array.from({ length: Math.min(ids.length, runtime.load().maxPassesInFlight) }, lane));
  } finally {
    clearInterval(ticker);
    progress.done();
  }
  const outcomes = found.flat();
  const asked = executionId && outcomes.length === 0 ? await runtime.execution(executionId) : undefined;
  if (executionId && outcomes.length === 0 && !asked) throw unknownExecution(executionId);
  if (out.json) out.document(outcomes);
  else if (outcomes.length === 0)
    out.line(executionId && asked ? nothingToRecover(executionId, asked) : "Nothing to recover.");
  else for (const outcome of outcomes) printOutcome(out, outcome, "Recovered");
  const failed = outcomes.filter((outcome) => outcome.status === "error");
  if (failed.some((outcome) => outcome.status === "error" && outcome.code === "STORAGE_ERROR")) return EXIT_CODES.store;
  return failed.length > 0 ? EXIT_CODES.runFailed : EXIT_CODES.ok;
}

/** Why recover left a run it was asked for as it was. */
function nothingToRecover(executionId: string, state: ExecutionState): string {
  if (state.status === "error" && state.errorCode === "SANDBOX_CRASHED")
    return `Nothing to recover: ${executionId} ended SANDBOX_CRASHED (its program crashed its sandbox process), and recover never runs such a run again. See it with: codemode show ${executionId}; to run it anyway: codemode rerun ${executionId} --code SANDBOX_CRASHED`;
  if (state.status === "running") return `Nothing to recover: ${executionId} is running, and its host holds it.`;
  if (state.status === "paused") return `Nothing to recover: ${executionId} is paused, waiting for a decision.`;
  const code = state.errorCode ? ` (${state.errorCode})` : "";
  return `Nothing to recover: ${executionId} ended ${state.status}${code}; recover resumes only runs whose host is gone.`;
}

/** "3 running, 12 queued (oldest waiting 1.4 s)": the runtime's passes, for a progress line. */
export function passLoad(load: PassLoad): string {
  const waiting = load.passesQueued > 0 ? ` (oldest waiting ${(load.oldestQueuedMs / 1000).toFixed(1)} s)` : "";
  return `${load.passesInFlight} running, ${load.passesQueued} queued${waiting}`;
}

/** Every running execution (a live worker's are skipped by `recover` itself: their lease is held). */
async function runningIds(runtime: CommandContext["runtime"], out: CommandContext["out"]): Promise<string[]> {
  const progress = new Progress("looking for running executions", out.stderr);
  const ids: string[] = [];
  let cursor: string | undefined;
  try {
    do {
      const page = await runtime.executions({ status: "running", limit: 200, ...(cursor ? { cursor } : {}) });
      ids.push(...page.items.map((item) => item.id));
      cursor = page.cursor;
      progress.update(`${ids.length} found`);
    } while (cursor);
  } finally {
    progress.done();
  }
  return ids;
}
