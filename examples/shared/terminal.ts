// Terminal helpers the examples share: the approval prompt and the call-log table.
import { createInterface } from "node:readline/promises";
import type { LogEntry } from "@codemode/core";

/** Asks a yes/no question; outside a terminal it answers yes and says so. */
export async function askYesNo(question: string): Promise<boolean> {
  if (!process.stdin.isTTY) {
    console.log(`\n${question} [y/N] y   (approved automatically: not a terminal)`);
    return true;
  }
  return /^y(es)?$/i.test(await askLine(`\n${question} [y/N] `));
}

/** One line typed at a prompt, trimmed. */
export async function askLine(prompt: string): Promise<string> {
  const terminal = createInterface({ input: process.stdin, output: process.stdout });
  try {
    return (await terminal.question(prompt)).trim();
  } finally {
    terminal.close();
  }
}

/** The durable call log as a table: seq, call, state, who decided, arguments and result. */
export function printTable(log: LogEntry[]): void {
  const rows = log.map((entry) => [
    String(entry.seq),
    `${entry.connector}.${entry.method}`,
    entry.state,
    entry.decision
      ? `${entry.decision.approved ? "approved" : "rejected"} by ${entry.decision.by ?? "?"}`
      : entry.requiresApproval
        ? "needs approval"
        : "",
    clip(JSON.stringify(entry.args) ?? ""),
    clip(entry.error ?? JSON.stringify(entry.result) ?? ""),
  ]);
  const header = ["seq", "call", "state", "approval", "args", "result"];
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column]!.length)));
  const line = (cells: string[]) => cells.map((cell, column) => cell.padEnd(widths[column]!)).join("  ");
  console.log(line(header));
  console.log(widths.map((width) => "-".repeat(width)).join("  "));
  for (const row of rows) console.log(line(row));
}

/** Indents a program for printing. */
export function indent(text: string): string {
  return text
    .split("\n")
    .map((line) => `    ${line}`)
    .join("\n");
}

function clip(text: string): string {
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}
