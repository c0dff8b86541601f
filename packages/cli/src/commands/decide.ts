import { userInfo } from "node:os";
import type { DecideInput, Decision, Outcome } from "@codemode/core";
import type { Command } from "commander";
import { CliError, exitCodeOf } from "../cli-error.js";
import { type CommandContext, wholeNumber } from "../command-context.js";
import { EXIT_CODES, type ExitCode } from "../exit-codes.js";
import { Progress } from "../output/progress.js";
import { visibleOnOneLine } from "../output/terminal.js";
import {
  type ApproveOptions,
  approvals,
  checkEditUsage,
  checkGrantUsage,
  collect,
  decisionsFile,
  seqsOf,
} from "./decision-input.js";
import { isRefusal, refusal, staleError } from "./decision-refusal.js";
import { printDecided } from "./decision-report.js";
import { onExecution, type Register } from "./register.js";

export { printOutcome } from "./decision-report.js";

interface RejectOptions {
  seq?: string;
  by?: string;
  reason?: string;
}

const SEQ_HELP = "a call you decide (repeat for several); refused if it is not pending now";
const BY_HELP = "who decides, for the audit trail (default: $CODEMODE_OPERATOR or your user name)";

/**
 * `approve`, `deny`, `decide` and `reject`: decide the pending calls of a paused run (R-AP-9),
 * recorded with who and why. The first three go through `runtime.decide` and run the resumed
 * pass here; `reject` ends the run.
 */
export function registerDecisions(program: Command, register: Register): void {
  register(
    program
      .command("approve")
      .description("approve pending calls (default: every one) and resume the run; --args edits one call")
      .argument("<id>", "the execution id")
      .option("--seq <seq>", SEQ_HELP, collect)
      .option("--args <json>", "edit: run the one --seq call with these arguments (JSON) instead")
      .option("--args-file <file>", "edit: the arguments from a JSON file")
      .option("--grant <n>", "with one --seq: also approve up to n further calls of its method as they come")
      .option("--by <name>", BY_HELP)
      .option("--reason <text>", "why, for the audit trail"),
    onExecution(approve),
  );
  register(
    program
      .command("deny")
      .description("deny pending calls: each rejects in the program (ApprovalDenied), which may catch it")
      .argument("<id>", "the execution id")
      .requiredOption("--seq <seq>", SEQ_HELP, collect)
      .requiredOption("--reason <text>", "why: the program's error says it, and the audit trail keeps it")
      .option("--by <name>", BY_HELP),
    onExecution(deny),
  );
  register(
    program
      .command("decide")
      .description(
        'decide from a JSON file: { "decisions": [{ seq, decision, args?, reason?, grant? }], by?, reason? }',
      )
      .argument("<id>", "the execution id")
      .requiredOption(
        "--file <file>",
        '{ "decisions": [{ seq, decision, args?, reason?, grant? }], by?, reason? }, or the array',
      )
      .option("--by <name>", `${BY_HELP}; the file's "by" comes first`),
    onExecution(decideFromFile),
  );
  register(
    program
      .command("reject")
      .description("reject the run at a pending call: the run ends rejected (deny lets the program go on)")
      .argument("<id>", "the execution id")
      .option("--seq <seq>", "the call you mean (refused if it is not pending now)")
      .option("--by <name>", BY_HELP)
      .option("--reason <text>", "why, for the audit trail"),
    onExecution(reject),
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

async function approve(context: CommandContext, executionId: string, options: ApproveOptions) {
  // Usage first: a wrong command line changes nothing and reads nothing.
  checkEditUsage(options);
  wholeNumber(options.grant, "--grant", 1);
  checkGrantUsage(options);
  let seqs = seqsOf(options.seq);
  if (seqs.length === 0) {
    seqs = (await context.runtime.pending(executionId)).items.map((action) => action.seq);
    if (seqs.length === 0) throw await staleError(context.runtime, executionId, []);
  }
  return decideAndReport(context, {
    executionId,
    decisions: approvals(options, seqs),
    by: options.by ?? defaultOperator(),
    ...(options.reason ? { reason: options.reason } : {}),
  });
}

async function deny(
  context: CommandContext,
  executionId: string,
  options: { seq?: string[]; reason?: string; by?: string },
) {
  const reason = options.reason?.trim();
  if (!reason)
    throw new CliError(EXIT_CODES.usage, "deny needs --reason: the program's error and the audit trail say it");
  const decisions = seqsOf(options.seq).map((seq): Decision => ({ seq, decision: "deny" }));
  return decideAndReport(context, { executionId, decisions, by: options.by ?? defaultOperator(), reason });
}

async function decideFromFile(context: CommandContext, executionId: string, options: { file: string; by?: string }) {
  const input = decisionsFile(options.file);
  return decideAndReport(context, { ...input, executionId, by: input.by ?? options.by ?? defaultOperator() });
}

/** Decides, runs the resumed pass here, and says what was decided and how the run went on. */
async function decideAndReport({ runtime, out }: CommandContext, input: DecideInput): Promise<ExitCode> {
  const progress = new Progress(`deciding ${visibleOnOneLine(input.executionId)} (running its next pass)`, out.stderr);
  const since = Date.now();
  let outcome: Outcome;
  try {
    outcome = await runtime.decide(input);
  } finally {
    progress.done();
  }
  if (outcome.status === "error" && isRefusal(outcome, input.decisions, since))
    throw await refusal(runtime, outcome, seqsOfInput(input));
  if (out.json) out.document(outcome);
  else printDecided(out, outcome, input.decisions);
  if (outcome.status !== "error") return EXIT_CODES.ok;
  if (outcome.code !== "APPROVAL_DENIED") return exitCodeOf(outcome.code);
  // The run ended rejected, the program not catching a denial: what denying asks for (R-AP-9).
  // After approvals only (a policy denied a later call), the run failed.
  return input.decisions.some((decision) => decision.decision === "deny") ? EXIT_CODES.ok : EXIT_CODES.runFailed;
}

/** The seqs of decisions that may have come from a file, as far as they are numbers. */
function seqsOfInput(input: DecideInput): number[] {
  const decisions: unknown[] = Array.isArray(input.decisions) ? input.decisions : [];
  return decisions
    .map((decision) => (decision as { seq?: unknown } | null)?.seq)
    .filter((seq): seq is number => typeof seq === "number");
}

async function reject({ runtime, out }: CommandContext, executionId: string, options: RejectOptions) {
  let seq = wholeNumber(options.seq, "--seq");
  if (seq === undefined) {
    const { items } = await runtime.pending(executionId);
    seq = items[0]?.seq;
    if (seq === undefined) throw await staleError(runtime, executionId, []);
  }
  const by = options.by ?? defaultOperator();
  const rejected = await runtime.reject({
    executionId,
    seq,
    by,
    ...(options.reason ? { reason: options.reason } : {}),
  });
  if (!rejected) throw await staleError(runtime, executionId, [seq]);
  if (out.json) out.document({ executionId, seq, rejected: true, status: "rejected", by });
  else out.line(`Rejected seq ${seq} of ${visibleOnOneLine(executionId)}; the run ended rejected.`);
  return EXIT_CODES.ok;
}
