import { readFile } from "node:fs/promises";
import { type CodemodeRuntime, ERROR_CODES, type ErrorCode, type Outcome } from "@codemode/core";
import type { RerunQuery, RerunReport, RerunResult } from "@codemode/core/operations";
import type { Command } from "commander";
import { CliError, exitCodeOf, firstLine, storeUnreachable, unknownExecution } from "../cli-error.js";
import { type CommandContext, requireRuntimeMethod, wholeNumber } from "../command-context.js";
import { EXIT_CODES, type ExitCode } from "../exit-codes.js";
import { Progress } from "../output/progress.js";
import { type Output, visibleOnOneLine, wholeOnOneLine } from "../output/terminal.js";
import { printOutcome } from "./decide.js";
import { onExecution, type Register } from "./register.js";
import { LIMIT_HELP, onlyId, runWindow } from "./run-choice.js";

// Run surgery: `fork` starts a new run from a step of a stored one, `rerun` runs failed runs again.

export interface ForkOptions {
  from?: string;
  codeFile?: string;
}

export interface RerunOptions {
  id?: string;
  status?: string;
  code?: string[];
  since?: string;
  limit?: string;
  dryRun?: boolean;
}

/** Codes a fork or rerun answers with when nothing was run: the operation was refused. */
const REFUSALS = new Set<string>(["NOT_FOUND", "BUSY", "STORAGE_ERROR", "MISSING_CONNECTOR"]);

export function registerSurgery(program: Command, register: Register): void {
  register(
    program
      .command("fork")
      .description(
        "start a new run from a stored one: its log before --from replays, everything from that seq on runs live",
      )
      .argument("<id>", "the execution to fork (it is not changed)")
      .requiredOption("--from <seq>", "the first seq that runs live (0 runs the whole program again)")
      .option("--code-file <file>", "run this code instead of the original's (the recorded prefix must still match)"),
    onExecution(fork),
  );
  register(
    program
      .command("rerun")
      .description(
        "run failed runs again, each as a new pass of its own run (default: those the store or a lease failed)",
      )
      .option("--id <executionId>", "only this execution (any failure but SYNTAX_ERROR)")
      .option("--status <status>", "only error: the runs that failed", "error")
      .option("--code <code...>", "failure codes to rerun (default STORAGE_ERROR BUSY); comma-separated or repeated")
      .option("--since <duration>", "only runs created within this long before now: 90s, 30m, 24h, 7d")
      .option("-n, --limit <n>", LIMIT_HELP)
      .option("--dry-run", "list the runs that would run again; run nothing, change nothing"),
    (options: RerunOptions) => (context) => rerun(context, options),
  );
}

async function fork({ runtime, out }: CommandContext, executionId: string, options: ForkOptions): Promise<ExitCode> {
  const fromSeq = wholeNumber(options.from, "--from");
  if (fromSeq === undefined) throw new CliError(EXIT_CODES.usage, "--from needs the seq the fork runs live from");
  const code = options.codeFile === undefined ? undefined : await codeFrom(options.codeFile);
  const progress = new Progress(
    `forking ${executionId} from seq ${fromSeq} (running the fork's first pass)`,
    out.stderr,
  );
  let outcome: Outcome;
  try {
    outcome = await runtime.fork({ executionId, fromSeq, ...(code !== undefined ? { code } : {}) });
  } finally {
    progress.done();
  }
  if (outcome.status === "error" && REFUSALS.has(outcome.code) && !(await forkStored(runtime, outcome, fromSeq)))
    throw await refusal(runtime, outcome, executionId);
  if (out.json) out.document(outcome);
  else {
    out.line(`Forked ${executionId} from seq ${fromSeq} as ${outcome.executionId}.`);
    printOutcome(out, outcome, "Ran");
  }
  if (outcome.status !== "error") return EXIT_CODES.ok;
  // The fork was made and its first pass failed: the store or a lease failing it is said so.
  return REFUSALS.has(outcome.code) ? exitCodeOf(outcome.code) : EXIT_CODES.runFailed;
}

/**
 * Whether the fork an error outcome names was stored (its first pass then failed, a store blip
 * say): its id must be shown, or the operator forks again. A store that cannot be read to tell
 * is a refusal that names the id to check.
 */
async function forkStored(
  runtime: CommandContext["runtime"],
  outcome: Extract<Outcome, { status: "error" }>,
  fromSeq: number,
): Promise<boolean> {
  if (outcome.code === "NOT_FOUND") return false;
  try {
    const stored = await runtime.execution(outcome.executionId);
    return stored?.forkedFrom?.fromSeq === fromSeq;
  } catch {
    throw storeUnreachable(
      `${firstLine(outcome.error)}; the fork may have been stored as ${outcome.executionId}: check with codemode show ${outcome.executionId}`,
    );
  }
}

/** The code a fork runs, from a file: a missing or empty file is a usage error, not a run that fails. */
async function codeFrom(file: string): Promise<string> {
  let code: string;
  try {
    code = await readFile(file, "utf8");
  } catch (error) {
    const reason =
      (error as NodeJS.ErrnoException).code === "ENOENT" ? "there is no such file" : firstLine(String(error));
    throw new CliError(EXIT_CODES.usage, `--code-file ${file}: ${reason}`);
  }
  if (code.trim() === "") throw new CliError(EXIT_CODES.usage, `--code-file ${file} is empty`);
  return code;
}

/**
 * A fork that was not made, as its exit code: unknown run or seq 3, busy 5, store 7, connector 4.
 * NOT_FOUND is an unknown run when the store has no such execution (asked, not read from the text).
 */
async function refusal(
  runtime: CodemodeRuntime,
  outcome: Extract<Outcome, { status: "error" }>,
  executionId: string,
): Promise<CliError> {
  if (outcome.code === "STORAGE_ERROR") return storeUnreachable(outcome.error);
  if (outcome.code === "NOT_FOUND" && (await runtime.execution(executionId).catch(() => undefined)) === null)
    return unknownExecution(executionId);
  return new CliError(exitCodeOf(outcome.code), firstLine(outcome.error), outcome.code);
}

async function rerun({ runtime, out }: CommandContext, options: RerunOptions): Promise<ExitCode> {
  const query = rerunQuery(options);
  requireRuntimeMethod(runtime, "rerun");
  const progress = new Progress(query.dryRun ? "looking for failed runs" : "running failed runs again", out.stderr);
  let report: RerunReport;
  try {
    report = await runtime.rerun(query);
  } finally {
    progress.done();
  }
  if (query.executionId !== undefined && report.results[0]?.reason?.code === "NOT_FOUND")
    throw unknownExecution(query.executionId);
  if (out.json) out.document(report);
  else printRerun(out, report);
  return rerunExitCode(report);
}

/** The query the flags make; usage errors for flags that cannot go together or values it cannot take. */
export function rerunQuery(options: RerunOptions, now = Date.now()): RerunQuery {
  if (options.status !== undefined && options.status !== "error")
    throw new CliError(
      EXIT_CODES.usage,
      `rerun takes failed runs only: --status error, not ${JSON.stringify(options.status)}`,
    );
  const codes = codesOf(options.code);
  const chosen = { ...(codes ? { codes } : {}), ...(options.dryRun === true ? { dryRun: true } : {}) };
  const executionId = onlyId(options, "reruns");
  if (executionId !== undefined) return { executionId, ...chosen };
  return { status: "error", ...chosen, ...runWindow(options, now) };
}

function codesOf(values: readonly string[] | undefined): ErrorCode[] | undefined {
  const codes = values
    ?.flatMap((value) => value.split(","))
    .map((value) => value.trim().toUpperCase())
    .filter(Boolean);
  if (!codes?.length) return undefined;
  const unknown = codes.filter((code) => !(ERROR_CODES as readonly string[]).includes(code));
  if (unknown.length > 0)
    throw new CliError(
      EXIT_CODES.usage,
      `unknown error code ${visibleOnOneLine(unknown.join(", "))}; use ${ERROR_CODES.join(", ")}`,
    );
  if (codes.includes("SYNTAX_ERROR"))
    throw new CliError(
      EXIT_CODES.usage,
      "SYNTAX_ERROR runs fail the same way again; fork them with new code: codemode fork <id> --from 0 --code-file fixed.js",
    );
  return codes as ErrorCode[];
}

/**
 * 7 when the store failed for a run, 1 when a run failed again, 5 when one was held by another
 * process, 4 when one could not run here (a connector missing, changed meanwhile), else 0.
 */
export function rerunExitCode(report: RerunReport): ExitCode {
  const codes = report.results.map(
    (result) => result.reason?.code ?? (result.outcome?.status === "error" ? result.outcome.code : undefined),
  );
  if (codes.includes("STORAGE_ERROR")) return EXIT_CODES.store;
  if (report.results.some((result) => result.action === "rerun" && result.outcome?.status === "error"))
    return EXIT_CODES.runFailed;
  if (codes.includes("BUSY")) return EXIT_CODES.busy;
  if (report.results.some((result) => result.action === "skipped")) return EXIT_CODES.conflict;
  return EXIT_CODES.ok;
}

type Verdict = "RERUN" | "WOULD" | "SKIPPED" | "FAILED";
const VERDICT_STYLES = { RERUN: "green", WOULD: "yellow", SKIPPED: "yellow", FAILED: "red" } as const;

function printRerun(out: Output, report: RerunReport): void {
  for (const result of report.results) {
    const { verdict, text } = rerunLine(result);
    out.line(`${out.paint(verdict.padEnd("SKIPPED".length), VERDICT_STYLES[verdict])}  ${text}`);
  }
  const count = (action: RerunResult["action"]) => report.results.filter((result) => result.action === action).length;
  const again = report.results.filter((result) => result.outcome?.status === "error").length;
  out.line(
    report.dryRun
      ? `${count("would-rerun")} would run again, ${count("skipped")} skipped (dry run: nothing ran)`
      : `${count("rerun")} ran again (${again} failed again), ${count("skipped")} skipped`,
  );
  if (report.dryRun && count("would-rerun") > 0) out.hint("Run them: the same command without --dry-run.");
  if (again > 0)
    out.hint(
      "A run that fails the same way again replays a recorded failure; see it with codemode show <id>, and fork it from the failed call's seq: codemode fork <id> --from <seq>.",
    );
}

/**
 * One run's line: what was done, its id, what it had failed with, and how its new pass ended or
 * why it was skipped. Everything from the store is shown on one line, escaped.
 */
export function rerunLine(result: RerunResult): { verdict: Verdict; text: string } {
  const failedWith = `${visibleOnOneLine(result.failed.code)}: ${wholeOnOneLine(result.failed.error)}`;
  const run = `${visibleOnOneLine(result.executionId)}  was ${failedWith}`;
  if (result.action === "would-rerun") return { verdict: "WOULD", text: run };
  if (result.action === "skipped") {
    const reason = result.reason ? `${result.reason.code}: ${wholeOnOneLine(result.reason.message)}` : "skipped";
    return { verdict: "SKIPPED", text: `${run}  →  ${reason}` };
  }
  const outcome = result.outcome;
  if (!outcome || outcome.status === "error")
    return {
      verdict: "FAILED",
      text: `${run}  →  error ${outcome ? `${outcome.code}: ${wholeOnOneLine(outcome.error)}` : ""}`.trimEnd(),
    };
  const next = outcome.status === "paused" ? outcome.pending[0] : undefined;
  const where = next ? ` at seq ${next.seq} (${visibleOnOneLine(`${next.connector}.${next.method}`)})` : "";
  return { verdict: "RERUN", text: `${run}  →  ${outcome.status}${where}` };
}
