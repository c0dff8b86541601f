import type {
  ArgumentDifference,
  Divergence,
  DivergentCall,
  ReplayCheckQuery,
  ReplayCheckReport,
  ReplayCheckResult,
} from "@codemode/core/operations";
import { ALL_STATUSES } from "@codemode/core/store";
import type { Command } from "commander";
import { firstLine, unknownExecution } from "../cli-error.js";
import { type CommandContext, requireRuntimeMethod } from "../command-context.js";
import { EXIT_CODES, type ExitCode } from "../exit-codes.js";
import { Progress } from "../output/progress.js";
import { abbreviate, type Output, visibleOnOneLine } from "../output/terminal.js";
import { statusesOf } from "./list.js";
import type { Register } from "./register.js";
import { LIMIT_HELP, onlyId, runWindow } from "./run-choice.js";

export interface ReplayCheckOptions {
  id?: string;
  status?: string[];
  since?: string;
  limit?: string;
}

/** Characters of one value of a difference, and of whole arguments; `show --full` has them whole. */
const VALUE_CHARS = 60;
const ARGUMENTS_CHARS = 120;

/** `replay-check`: would the stored runs still replay against the tools as they are now? */
export function registerReplayCheck(program: Command, register: Register): void {
  register(
    program
      .command("replay-check")
      .description(
        "check stored runs (default: paused) against the current code, tools and schemas; calls no tool, changes nothing",
      )
      .option("--id <executionId>", "only this execution")
      .option("-s, --status <status...>", `runs with these statuses (${ALL_STATUSES.join(", ")}; default paused)`)
      .option("--since <duration>", "only runs created within this long before now: 90s, 30m, 24h, 7d")
      .option("-n, --limit <n>", LIMIT_HELP),
    (options: ReplayCheckOptions) => (context) => replayCheck(context, options),
  );
}

async function replayCheck({ runtime, out }: CommandContext, options: ReplayCheckOptions): Promise<ExitCode> {
  const target = replayCheckTarget(options);
  requireRuntimeMethod(runtime, "replayCheck");
  const progress = new Progress(
    typeof target === "string" ? `checking ${target}` : "checking stored runs against the current tools",
    out.stderr,
  );
  let report: ReplayCheckReport;
  try {
    report = await runtime.replayCheck(target);
  } finally {
    progress.done();
  }
  const missing = report.results.find((result) => result.error?.code === "NOT_FOUND");
  if (missing) throw unknownExecution(missing.executionId);
  if (out.json) out.document(report);
  else printReport(out, report);
  return replayCheckExitCode(report);
}

/** What to check: the execution `--id` names, or the query the other flags make; usage errors for the rest. */
export function replayCheckTarget(options: ReplayCheckOptions, now = Date.now()): string | ReplayCheckQuery {
  const id = onlyId(options, "checks", { "--status": options.status });
  if (id !== undefined) return id;
  const status = statusesOf(options.status);
  return { ...(status?.length ? { status } : {}), ...runWindow(options, now) };
}

/** 8 when a run diverges (even when another could not be checked), 1 when one could not be checked, else 0. */
export function replayCheckExitCode(report: ReplayCheckReport): ExitCode {
  if (report.results.some((result) => result.divergence !== undefined)) return EXIT_CODES.diverges;
  if (!report.ok) return EXIT_CODES.runFailed;
  return EXIT_CODES.ok;
}

type Verdict = "ok" | "DIVERGES" | "ERROR";

const VERDICT_STYLES = { ok: "green", DIVERGES: "red", ERROR: "red" } as const;

function printReport(out: Output, report: ReplayCheckReport): void {
  for (const result of report.results) {
    const text = resultText(result);
    out.line(`${out.paint(text.verdict.padEnd("DIVERGES".length), VERDICT_STYLES[text.verdict])}  ${text.head}`);
    for (const detail of text.details) out.line(`    ${detail}`);
  }
  const diverging = report.results.filter((result) => result.divergence !== undefined).length;
  const failed = report.results.filter((result) => !result.ok && result.divergence === undefined).length;
  out.line(
    `${report.results.length} checked, ${diverging} diverge${diverging === 1 ? "s" : ""}${failed > 0 ? `, ${failed} could not be checked` : ""}`,
  );
  if (diverging > 0)
    out.hint(
      "Keep the old tool accepting what was recorded (add create_order_v2, keep create_order until these runs are decided), or reject or expire them; see https://github.com/codemode-for-node/codemode/blob/main/docs/operating.md#changing-tools-while-runs-are-paused",
    );
}

/**
 * One run's check in words: its verdict, a line with the id and status (and for a divergence
 * where, what kind, recorded vs now), then the details. Everything that came from the store is
 * made visible on one line (`visibleOnOneLine`): a stored argument cannot write to the terminal
 * or forge a line of the report.
 */
export function resultText(result: ReplayCheckResult): { verdict: Verdict; head: string; details: string[] } {
  const run = `${visibleOnOneLine(result.executionId)}  ${visibleOnOneLine(result.status ?? "(no status)")}`;
  const { divergence, error } = result;
  if (divergence)
    return {
      verdict: "DIVERGES",
      head: `${run}  ${divergenceHead(divergence)}`,
      details: divergenceDetails(divergence),
    };
  if (!result.ok) {
    const why = error ? `${error.code}: ${visibleOnOneLine(firstLine(error.message))}` : "the check could not run";
    return { verdict: "ERROR", head: `${run}  ${why}`, details: [] };
  }
  const calls = `replayed ${result.replayed} call${result.replayed === 1 ? "" : "s"}`;
  return { verdict: "ok", head: `${run}  ${calls} ${STOPS[result.stoppedAt] ?? `(${result.stoppedAt})`}`, details: [] };
}

const STOPS: Partial<Record<ReplayCheckResult["stoppedAt"], string>> = {
  end: "to the program's end",
  frontier: "up to its next unrecorded call",
  reexecute: 'up to a call that re-executes (replay: "reexecute")',
};

const KINDS: Record<Divergence["kind"], string> = {
  call: "the program now makes another call at this seq",
  arguments: "the program now calls it with other arguments",
  schema: "the tool's schema now refuses the recorded arguments",
  "missing-tool": "the recorded tool is not configured any more",
  ended: "the program now ends before reaching this call",
};

/** "seq 1 schema: recorded tickets.create", with "vs now tickets.list" when the program issued a call. */
export function divergenceHead(divergence: Divergence): string {
  const recorded = divergence.recorded ? `recorded ${callName(divergence.recorded)}` : "recorded nothing";
  const now = divergence.now ? ` vs now ${callName(divergence.now)}` : "";
  return `seq ${divergence.seq} ${visibleOnOneLine(String(divergence.kind))}: ${recorded}${now}`;
}

export function divergenceDetails(divergence: Divergence): string[] {
  const details = [KINDS[divergence.kind] ?? visibleOnOneLine(firstLine(divergence.message))];
  if (divergence.argumentDiff?.length)
    for (const difference of divergence.argumentDiff) details.push(differenceText(difference));
  else {
    if (divergence.recorded?.args !== undefined)
      details.push(`recorded arguments: ${value(divergence.recorded.args, ARGUMENTS_CHARS)}`);
    if (divergence.now?.args !== undefined)
      details.push(`now arguments:      ${value(divergence.now.args, ARGUMENTS_CHARS)}`);
  }
  if (divergence.schemaError !== undefined) {
    // A validator's message lists its problems a line each; each stays a line of its own, indented.
    const [first = "", ...rest] = divergence.schemaError.split("\n");
    details.push(`schema: ${visibleOnOneLine(first)}`, ...rest.map((line) => `        ${visibleOnOneLine(line)}`));
  }
  return details;
}

/** "args.items[0].sku: "mug" → "cup"", a side the arguments lack shown as (absent). */
function differenceText(difference: ArgumentDifference): string {
  const side = (key: "recorded" | "now") => (key in difference ? value(difference[key]) : "(absent)");
  return `args${visibleOnOneLine(difference.path)}: ${side("recorded")} → ${side("now")}`;
}

function callName(call: DivergentCall): string {
  return visibleOnOneLine(`${call.connector}.${call.method}`);
}

function value(shown: unknown, max = VALUE_CHARS): string {
  return visibleOnOneLine(abbreviate(shown, max));
}
