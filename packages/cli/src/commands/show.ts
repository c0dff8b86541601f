import type { ExecutionState, LogEntry } from "@codemode/core";
import type { Command } from "commander";
import { unknownExecution } from "../cli-error.js";
import type { CommandContext } from "../command-context.js";
import { ago, callList, clockTime, decidedVerb } from "../explain.js";
import { abbreviate, type Cell, type Output, pretty, visibleOnOneLine, wholeOnOneLine } from "../output/terminal.js";
import { onExecution, type Register } from "./register.js";
import { divergenceDetails, divergenceHead } from "./replay-check.js";

/** `show <id>`: an execution and its call log, the audit trail of who decided what. */
export function registerShow(program: Command, register: Register): void {
  register(
    program
      .command("show")
      .description("show an execution: status, result, and its call log as a table")
      .argument("<id>", "the execution id")
      .option("-f, --full", "arguments, results and the code in full instead of abbreviated"),
    onExecution((context, executionId, options: { full?: boolean }) =>
      show(context, executionId, options.full === true),
    ),
  );
}

async function show({ runtime, out }: CommandContext, executionId: string, full: boolean) {
  const execution = await runtime.execution(executionId);
  if (!execution) throw unknownExecution(executionId);
  if (out.json) return void out.document(execution);
  printHeader(out, execution);
  out.line();
  if (execution.log.length === 0) out.line("No calls yet.");
  else if (full) printFullLog(out, execution.log);
  else
    out.table(
      ["seq", "call", "state", "arguments", "result", "decision"],
      execution.log.map((entry) => logRow(out, entry)),
    );
  if (full) {
    out.line();
    out.line(out.paint("Code", "bold"));
    out.line(execution.code);
  }
  const pending = pendingOf(execution);
  if (pending.length > 0) out.hint(waitingHint(visibleOnOneLine(execution.id), pending));
  else if (!full) out.hint("Values are abbreviated; --full shows them whole.");
  return undefined;
}

/** The calls a paused run waits on: one, or several at once (R-AP-8). */
function pendingOf(execution: ExecutionState): LogEntry[] {
  return execution.status === "paused" ? execution.log.filter((entry) => entry.state === "pending") : [];
}

function waitingHint(id: string, pending: readonly LogEntry[]): string {
  const reject = `Reject the run: codemode reject ${id} --reason <why>`;
  const [only] = pending;
  if (only && pending.length === 1)
    return `Waiting at seq ${only.seq}. Approve: codemode approve ${id} --seq ${only.seq}   Deny: codemode deny ${id} --seq ${only.seq} --reason <why>   ${reject}`;
  const seqs = pending.map((entry) => entry.seq).join(", ");
  return `Waiting at seqs ${seqs}. Approve all: codemode approve ${id}   one: --seq <seq>   Deny one: codemode deny ${id} --seq <seq> --reason <why>   ${reject}`;
}

function printHeader(out: Output, execution: ExecutionState): void {
  out.line(
    `${out.paint("Execution", "bold")} ${execution.id}  ${out.paint(execution.status, out.state(execution.status).style)}`,
  );
  out.line(`  created     ${clockTime(execution.createdAt)} (${ago(execution.createdAt)})`);
  out.line(`  updated     ${clockTime(execution.updatedAt)} (${ago(execution.updatedAt)})`);
  out.line(`  connectors  ${execution.connectors.join(", ") || "(none)"}`);
  if (execution.requestedBy) out.line(`  asked by    ${visibleOnOneLine(execution.requestedBy)}`);
  const pending = pendingOf(execution);
  if (pending.length > 0) out.line(`  waiting at  ${visibleOnOneLine(callList(pending))}`);
  if (execution.status === "completed") out.line(`  result      ${abbreviate(execution.result, 100)}`);
  if (execution.error)
    out.line(
      // With its own newlines, its later lines under its first (what could act on the terminal is shown as code points).
      `  error       ${execution.errorCode ? `${execution.errorCode}: ` : ""}${execution.error.split("\n").join(`\n${" ".repeat(14)}`)}`,
    );
  if (execution.divergence) {
    out.line(`  diverged    ${divergenceHead(execution.divergence)}`);
    for (const detail of divergenceDetails(execution.divergence)) out.line(`                ${detail}`);
  }
  if (execution.forkedFrom)
    out.line(
      `  forked from ${visibleOnOneLine(execution.forkedFrom.executionId)} at seq ${execution.forkedFrom.fromSeq}`,
    );
  const last = execution.reruns?.at(-1);
  if (last)
    out.line(
      `  rerun       ${execution.reruns?.length === 1 ? "once" : `${execution.reruns?.length} times`}, last after ${last.code ? `${last.code}: ` : ""}${wholeOnOneLine(last.error)} (${ago(last.at)})`,
    );
  if (execution.logs?.length)
    out.line(
      `  console     ${execution.logs.length} line${execution.logs.length === 1 ? "" : "s"}${execution.logs.length ? `, last: ${execution.logs.at(-1)}` : ""}`,
    );
}

function logRow(out: Output, entry: LogEntry): Array<Cell | string> {
  const outcome =
    entry.error !== undefined
      ? { text: abbreviate(entry.error, 40).replace(/^"|"$/g, ""), style: "red" as const }
      : abbreviate(entry.result, 40);
  // An edited call (R-AP-9): what ran, and what the program asked for.
  const args = edited(entry)
    ? `${abbreviate(entry.args, 40)} (asked ${abbreviate(entry.requestedArgs, 40)})`
    : abbreviate(entry.args, 40);
  return [
    String(entry.seq),
    `${entry.connector}.${entry.method}`,
    stateCell(out, entry),
    args,
    outcome,
    decisionText(entry),
  ];
}

/** A log entry's state; `denied` (R-AP-9) in red, as an error is. */
function stateCell(out: Output, entry: LogEntry): Cell {
  return entry.state === "denied" ? { text: entry.state, style: "red" } : out.state(entry.state);
}

/** A call a person edited keeps what the program asked for beside what ran. */
function edited(entry: LogEntry): boolean {
  return entry.requestedArgs !== undefined;
}

/** Who decided what, when and why ("approved by dana 2 min ago, grants 3 more calls: customer called"), and who reverted it. */
export function decisionText(entry: LogEntry): string {
  const decided = decidedText(entry);
  if (!entry.revert) return decided;
  const { by, at, reason } = entry.revert;
  const reverted = `reverted by ${visibleOnOneLine(by ?? "?")} ${ago(at)}${reason ? `: ${visibleOnOneLine(reason)}` : ""}`;
  return decided ? `${decided}; ${reverted}` : reverted;
}

function decidedText(entry: LogEntry): string {
  if (entry.decision) {
    const { decision } = entry;
    // Who and why are typed by people (or clients): on one line, so they cannot pose as rows.
    const by = visibleOnOneLine(decision.by ?? "?");
    const grant = decision.grant
      ? `, grants ${decision.grant.calls} more call${decision.grant.calls === 1 ? "" : "s"}`
      : "";
    const through = decision.viaGrant !== undefined ? ` through the grant at seq ${decision.viaGrant}` : "";
    return `${decidedVerb(decision)} by ${by}${through} ${ago(decision.at)}${grant}${decision.reason ? `: ${visibleOnOneLine(decision.reason)}` : ""}`;
  }
  if (entry.state === "pending") return "waiting for approval";
  return entry.requiresApproval ? "needs approval" : "";
}

function printFullLog(out: Output, log: readonly LogEntry[]): void {
  for (const entry of log) {
    out.line(
      `${out.paint(`#${entry.seq} ${entry.connector}.${entry.method}`, "bold")}  ${out.paint(entry.state, stateCell(out, entry).style)}  ${decisionText(entry)}`,
    );
    out.line(
      `  started ${clockTime(entry.startedAt)}${entry.endedAt !== undefined ? `, ended ${clockTime(entry.endedAt)}` : ""}`,
    );
    if (edited(entry)) {
      out.line(indent(`asked for: ${pretty(entry.requestedArgs)}`));
      out.line(indent(`ran with (edited): ${pretty(entry.args)}`));
    } else out.line(indent(`arguments: ${pretty(entry.args)}`));
    if (entry.error !== undefined) out.line(indent(`error: ${entry.error}`));
    else if (entry.result !== undefined) out.line(indent(`result: ${pretty(entry.result)}`));
    out.line();
  }
}

function indent(text: string): string {
  return text
    .split("\n")
    .map((line) => `  ${line}`)
    .join("\n");
}
