import { userInfo } from "node:os";
import type { CodemodeRuntime, ErrorOutcome, Outcome } from "@codemode/core";
import type { Command } from "commander";
import { CliError, exitCodeOf, storeUnreachable, unknownExecution } from "../cli-error.js";
import { type CommandContext, wholeNumber } from "../command-context.js";
import { EXIT_CODES } from "../exit-codes.js";
import { explainStale } from "../explain.js";
import { Progress } from "../output/progress.js";
import { abbreviate, type Output } from "../output/terminal.js";
import type { Register } from "./register.js";

interface DecisionOptions {
  seq?: string;
  by?: string;
  reason?: string;
}

/** Codes that mean the approval was not made (as opposed to a run that failed after it). */
const REFUSALS = new Set(["NOT_PAUSED", "NOT_FOUND", "BUSY", "STORAGE_ERROR", "MISSING_CONNECTOR"]);

/** `approve` and `reject`: decide the pending call of a paused run, recorded with who and why. */
export function registerDecisions(program: Command, register: Register): void {
  const decision = (command: Command) =>
    command
      .argument("<id>", "the execution id")
      .option("--seq <seq>", "the call you mean (refused if another call is pending now)")
      .option("--by <name>", "who decides, for the audit trail (default: $CODEMODE_OPERATOR or your user name)")
      .option("--reason <text>", "why, for the audit trail");
  register(
    decision(
      program.command("approve").description("approve the pending call and resume the run (runs its next pass here)"),
    ),
    (options: DecisionOptions, executionId = "") =>
      (context) =>
        approve(context, executionId, options),
  );
  register(
    decision(program.command("reject").description("reject the pending call: the run ends rejected")),
    (options: DecisionOptions, executionId = "") =>
      (context) =>
        reject(context, executionId, options),
  );
}

export function defaultOperator(): string {
  if (process.env.CODEMODE_OPERATOR) return process.env.CODEMODE_OPERATOR;
  try {
    return userInfo().username;
  } catch {
    return "cli";
  }
}

async function approve({ runtime, out }: CommandContext, executionId: string, options: DecisionOptions) {
  const seq = wholeNumber(options.seq, "--seq");
  const progress = new Progress(`approving ${executionId} (running its next pass)`, out.stderr);
  let outcome: Outcome;
  try {
    outcome = await runtime.approve({
      executionId,
      by: options.by ?? defaultOperator(),
      ...(seq !== undefined ? { seq } : {}),
      ...(options.reason ? { reason: options.reason } : {}),
    });
  } finally {
    progress.done();
  }
  // A store failure or a takeover during the resumed pass reads the same as one before it: same exit code.
  if (outcome.status === "error" && REFUSALS.has(outcome.code)) throw await refusal(runtime, outcome, seq);
  if (out.json) out.document(outcome);
  else printOutcome(out, outcome, "Approved");
  return outcome.status === "error" ? exitCodeOf(outcome.code) : EXIT_CODES.ok;
}

async function reject({ runtime, out }: CommandContext, executionId: string, options: DecisionOptions) {
  let seq = wholeNumber(options.seq, "--seq");
  if (seq === undefined) {
    const { items } = await runtime.pending(executionId);
    seq = items[0]?.seq;
    if (seq === undefined) throw await staleError(runtime, executionId, undefined);
  }
  const by = options.by ?? defaultOperator();
  const rejected = await runtime.reject({
    executionId,
    seq,
    by,
    ...(options.reason ? { reason: options.reason } : {}),
  });
  if (!rejected) throw await staleError(runtime, executionId, seq);
  if (out.json) out.document({ executionId, seq, rejected: true, status: "rejected", by });
  else out.line(`Rejected seq ${seq} of ${executionId}; the run ended rejected.`);
  return EXIT_CODES.ok;
}

/** Why an approval was refused, as the one line the person needs. */
async function refusal(runtime: CodemodeRuntime, outcome: ErrorOutcome, seq: number | undefined): Promise<CliError> {
  switch (outcome.code) {
    case "NOT_FOUND":
      return unknownExecution(outcome.executionId);
    case "STORAGE_ERROR":
      return storeUnreachable(outcome.error);
    case "BUSY":
      return new CliError(
        EXIT_CODES.busy,
        `execution ${outcome.executionId} is busy (a pass or another decision holds it); try again shortly`,
        "BUSY",
      );
    case "MISSING_CONNECTOR":
      return new CliError(
        EXIT_CODES.conflict,
        `${outcome.error}; add it to the config's runtime and approve again`,
        "MISSING_CONNECTOR",
      );
    default:
      return staleError(runtime, outcome.executionId, seq);
  }
}

/** "seq 1 (tickets.create) was already approved by dana at 17:51:34 (2 min ago); the run is now completed". */
async function staleError(runtime: CodemodeRuntime, executionId: string, seq: number | undefined): Promise<CliError> {
  const stale = explainStale(await runtime.execution(executionId), executionId, seq);
  if (!stale.found) return unknownExecution(executionId);
  return new CliError(
    EXIT_CODES.conflict,
    `execution ${executionId}: ${stale.message}; see: codemode show ${executionId}`,
    "NOT_PAUSED",
  );
}

/** An outcome in words: what happened and what to do next. */
export function printOutcome(out: Output, outcome: Outcome, verb: string): void {
  const approvedNow = outcome.calls?.filter((call) => call.decision?.approved).at(-1);
  const what =
    approvedNow && verb === "Approved"
      ? ` seq ${approvedNow.seq} (${approvedNow.connector}.${approvedNow.method}) of`
      : "";
  const head = `${verb}${what} ${outcome.executionId}`;
  if (outcome.status === "completed") {
    out.line(`${head}; the run ${out.paint("completed", "green")}.`);
    out.line(`Result: ${abbreviate(outcome.result, 200)}`);
  } else if (outcome.status === "paused") {
    const next = outcome.pending[0];
    out.line(
      `${head}; the run ${out.paint("paused", "yellow")} again${next ? ` at seq ${next.seq} (${next.connector}.${next.method})` : ""}.`,
    );
    if (next) {
      out.line(`Arguments: ${abbreviate(next.args, 200)}`);
      out.hint(`Approve: codemode approve ${outcome.executionId} --seq ${next.seq}`);
    }
  } else {
    out.line(`${head}; the run ended in ${out.paint("error", "red")}: ${outcome.code}: ${outcome.error}`);
  }
}
