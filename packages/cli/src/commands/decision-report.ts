import type { Decision, LogEntry, Outcome, PendingAction } from "@codemode/core";
import { callList, callOf } from "../explain.js";
import { abbreviate, type Output, visibleOnOneLine } from "../output/terminal.js";

// How `approve`, `deny` and `decide` say what they did: a line per decision (one line in all for
// a single one, as `approve` always printed), then how the run went on. The store's text (tool
// names, arguments, reasons) reaches the terminal through `Output.line`, escaped, and on one line.

/** The decisions made and how the run went on after them. */
export function printDecided(out: Output, outcome: Outcome, decisions: readonly Decision[]): void {
  const executionId = visibleOnOneLine(outcome.executionId);
  const went = howItWent(out, outcome);
  const phrases = decisions.map((decision) =>
    phraseOf(
      decision,
      outcome.calls?.find((entry) => entry.seq === decision.seq),
    ),
  );
  const [only] = phrases;
  if (only && phrases.length === 1) out.line(`${only.head} of ${executionId}${only.detail}; the run ${went.sentence}`);
  else {
    out.line(`Decided ${phrases.length} actions of ${executionId}:`);
    for (const phrase of phrases) out.line(`  ${lowerFirst(phrase.head)}${phrase.detail}`);
    out.line(`The run ${went.sentence}`);
  }
  for (const line of went.more) out.line(line);
  printNextSteps(out, outcome);
}

/**
 * An outcome in words after another verb ("Ran", "Recovered"): what happened and what to do
 * next. A paused run names every action it waits on (R-AP-8).
 */
export function printOutcome(out: Output, outcome: Outcome, verb: string): void {
  const went = howItWent(out, outcome);
  out.line(`${verb} ${visibleOnOneLine(outcome.executionId)}; the run ${went.sentence}`);
  for (const line of went.more) out.line(line);
  printNextSteps(out, outcome);
}

interface Phrase {
  /** "Approved seq 1 (tickets.create)". */
  head: string;
  /** What follows the execution id: the edit, the grant, the reason of a denial. */
  detail: string;
}

function phraseOf(decision: Decision, entry: LogEntry | undefined): Phrase {
  const call = entry ? visibleOnOneLine(callOf(entry)) : `seq ${decision.seq}`;
  const method = entry ? visibleOnOneLine(`${entry.connector}.${entry.method}`) : "the same method";
  const grant = decision.grant
    ? `, with a grant for ${decision.grant.calls} more ${method} call${decision.grant.calls === 1 ? "" : "s"}`
    : "";
  const reason = entry?.decision?.reason ?? decision.reason;
  const why = reason ? ` (${JSON.stringify(visibleOnOneLine(reason))})` : "";
  if (decision.decision === "deny") return { head: `Denied ${call}`, detail: why };
  if (decision.decision === "edit") {
    const asked = entry?.requestedArgs !== undefined ? ` (asked ${abbreviate(entry.requestedArgs, 120)})` : "";
    return { head: `Edited ${call}`, detail: ` to ${abbreviate(decision.args, 120)}${asked}${grant}${why}` };
  }
  return { head: `Approved ${call}`, detail: `${grant}${why}` };
}

/** How the run went on, as the end of "the run …", and the lines that follow it. */
function howItWent(out: Output, outcome: Outcome): { sentence: string; more: string[] } {
  if (outcome.status === "completed")
    return {
      sentence: `${out.paint("completed", "green")}.`,
      more: [`Result: ${abbreviate(outcome.result, 200)}`],
    };
  if (outcome.status === "paused") return pausedAgain(out, outcome.pending);
  // R-AP-9: a denial the program did not catch ends the run as `reject` does.
  if (outcome.code === "APPROVAL_DENIED") {
    const rejected = `execution ${outcome.executionId} was rejected: `;
    const why = outcome.error.startsWith(rejected) ? outcome.error.slice(rejected.length) : outcome.error;
    return {
      sentence: `ended ${out.paint("rejected", "red")}: the program did not catch the denial (${visibleOnOneLine(why)}).`,
      more: [],
    };
  }
  return { sentence: `ended in ${out.paint("error", "red")}: ${outcome.code}: ${outcome.error}`, more: [] };
}

function pausedAgain(out: Output, pending: readonly PendingAction[]): { sentence: string; more: string[] } {
  const paused = out.paint("paused", "yellow");
  const [only] = pending;
  if (!only) return { sentence: `${paused} again.`, more: [] };
  if (pending.length === 1)
    return {
      sentence: `${paused} again at ${visibleOnOneLine(callOf(only))}.`,
      more: [`Arguments: ${abbreviate(only.args, 200)}`],
    };
  return {
    sentence: `${paused} again with ${pending.length} actions pending: ${visibleOnOneLine(callList(pending))}.`,
    more: pending.map((action) => `Arguments of seq ${action.seq}: ${abbreviate(action.args, 200)}`),
  };
}

/** For a paused run: the commands that decide what it waits on, on stderr. */
function printNextSteps(out: Output, outcome: Outcome): void {
  if (outcome.status !== "paused" || outcome.pending.length === 0) return;
  const id = visibleOnOneLine(outcome.executionId);
  const [first] = outcome.pending;
  if (outcome.pending.length === 1 && first)
    out.hint(
      `Approve: codemode approve ${id} --seq ${first.seq}   Deny: codemode deny ${id} --seq ${first.seq} --reason <why>`,
    );
  else
    out.hint(
      `Approve all: codemode approve ${id}   one: codemode approve ${id} --seq <seq>   Deny one: codemode deny ${id} --seq <seq> --reason <why>`,
    );
}

function lowerFirst(text: string): string {
  return text.charAt(0).toLowerCase() + text.slice(1);
}
