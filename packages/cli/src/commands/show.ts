import type { ExecutionState, LogEntry } from "@codemode/core";
import type { Command } from "commander";
import { firstLine, unknownExecution } from "../cli-error.js";
import type { CommandContext } from "../command-context.js";
import { ago, clockTime } from "../explain.js";
import { abbreviate, type Cell, type Output, pretty, visibleOnOneLine } from "../output/terminal.js";
import type { Register } from "./register.js";
import { divergenceDetails, divergenceHead } from "./replay-check.js";

/** `show <id>`: an execution and its call log, the audit trail of who decided what. */
export function registerShow(program: Command, register: Register): void {
  register(
    program
      .command("show")
      .description("show an execution: status, result, and its call log as a table")
      .argument("<id>", "the execution id")
      .option("-f, --full", "arguments, results and the code in full instead of abbreviated"),
    (options: { full?: boolean }, executionId = "") =>
      (context) =>
        show(context, executionId, options.full === true),
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
  const pending = execution.log.find((entry) => entry.state === "pending");
  if (execution.status === "paused" && pending)
    out.hint(
      `Waiting at seq ${pending.seq}. Approve: codemode approve ${execution.id} --seq ${pending.seq}   Reject: codemode reject ${execution.id} --reason <why>`,
    );
  else if (!full) out.hint("Values are abbreviated; --full shows them whole.");
  return undefined;
}

function printHeader(out: Output, execution: ExecutionState): void {
  out.line(
    `${out.paint("Execution", "bold")} ${execution.id}  ${out.paint(execution.status, out.state(execution.status).style)}`,
  );
  out.line(`  created     ${clockTime(execution.createdAt)} (${ago(execution.createdAt)})`);
  out.line(`  updated     ${clockTime(execution.updatedAt)} (${ago(execution.updatedAt)})`);
  out.line(`  connectors  ${execution.connectors.join(", ") || "(none)"}`);
  if (execution.status === "completed") out.line(`  result      ${abbreviate(execution.result, 100)}`);
  if (execution.error)
    out.line(
      `  error       ${execution.errorCode ? `${execution.errorCode}: ` : ""}${visibleOnOneLine(execution.error)}`,
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
      `  rerun       ${execution.reruns?.length === 1 ? "once" : `${execution.reruns?.length} times`}, last after ${last.code ? `${last.code}: ` : ""}${visibleOnOneLine(firstLine(last.error))} (${ago(last.at)})`,
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
  return [
    String(entry.seq),
    `${entry.connector}.${entry.method}`,
    out.state(entry.state),
    abbreviate(entry.args, 40),
    outcome,
    decisionText(entry),
  ];
}

export function decisionText(entry: LogEntry): string {
  if (entry.decision) {
    const { decision } = entry;
    // Who and why are typed by people (or clients): on one line, so they cannot pose as rows.
    const by = visibleOnOneLine(decision.by ?? "?");
    return `${decision.approved ? "approved" : "rejected"} by ${by} ${ago(decision.at)}${decision.reason ? `: ${visibleOnOneLine(decision.reason)}` : ""}`;
  }
  if (entry.state === "pending") return "waiting for approval";
  return entry.requiresApproval ? "needs approval" : "";
}

function printFullLog(out: Output, log: readonly LogEntry[]): void {
  for (const entry of log) {
    out.line(
      `${out.paint(`#${entry.seq} ${entry.connector}.${entry.method}`, "bold")}  ${out.paint(entry.state, out.state(entry.state).style)}  ${decisionText(entry)}`,
    );
    out.line(
      `  started ${clockTime(entry.startedAt)}${entry.endedAt !== undefined ? `, ended ${clockTime(entry.endedAt)}` : ""}`,
    );
    out.line(indent(`arguments: ${pretty(entry.args)}`));
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
