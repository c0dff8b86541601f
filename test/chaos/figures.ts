/**
 * The figures a chaos test prints, for docs/fleet.md or bench/RESULTS.md: one Markdown table row
 * per store, and the details behind it.
 */
import type { CheckReport } from "./checker.ts";
import type { ApproverFigures } from "./pending-approver.ts";
import { backToWork, describeRestarts, type Restart, seconds } from "./restart-loop.ts";
import type { Submitter } from "./submitter.ts";
import type { WorkerFleet } from "./worker-fleet.ts";

export interface RunFigures {
  store: string;
  report: CheckReport;
  restarts: Restart[];
  workers: WorkerFleet;
  submitter: Submitter;
  approver: ApproverFigures;
  stalled: number;
  /** From the last submit's answer to every run completed; undefined when they did not. */
  drainMs: number | undefined;
  drainLimitMs: number;
  elapsedMs: number;
}

export const TABLE_HEADER = [
  "| store | runs | restarts (kill / clean) | down / unavailable in all | worker kills / freezes | drain after last submit | submits retried (STORAGE_ERROR) | orphans | worker deaths | runs that hit STORAGE_ERROR → completed | job attempts failed |",
  "|---|---|---|---|---|---|---|---|---|---|---|",
].join("\n");

export function tableRow(figures: RunFigures): string {
  const { report, restarts, workers, submitter } = figures;
  const kills = restarts.filter((restart) => restart.mode === "kill").length;
  const down = restarts.reduce((sum, restart) => sum + restart.downMs, 0);
  const unavailable = restarts.reduce((sum, restart) => sum + restart.unavailableMs, 0);
  const failedAttempts = Object.values(report.facts.attemptFailures).reduce((sum, count) => sum + count, 0);
  return `| ${[
    figures.store,
    `${report.facts.completed} of ${report.facts.accepted}`,
    `${restarts.length} (${kills} / ${restarts.length - kills})`,
    `${seconds(down)} / ${seconds(unavailable)}`,
    `${workers.kills} / ${workers.freezes}`,
    figures.drainMs === undefined ? `not within ${seconds(figures.drainLimitMs)}` : seconds(figures.drainMs),
    String(submitter.storageErrors),
    String(report.facts.orphans),
    String(workers.deaths.length),
    `${report.facts.faulted} → ${report.facts.faultedCompleted}`,
    String(failedAttempts),
  ].join(" | ")} |`;
}

export function details(figures: RunFigures): string {
  const { report, workers, submitter, approver } = figures;
  const facts = report.facts;
  const json = (value: unknown) => JSON.stringify(value);
  return [
    `${figures.store}: ${facts.completed} of ${facts.accepted} accepted runs completed (${facts.handedOut} ids handed out, ${facts.absent} absent) in ${seconds(figures.elapsedMs)}`,
    `  store: ${describeRestarts(figures.restarts)}`,
    `  back to work after the store answered again: ${describeGaps(backToWork(figures.restarts, facts.effectTimes))}`,
    `  workers: ${workers.kills} SIGKILLed and replaced, ${workers.freezes} frozen past the lease, ${workers.deaths.length} died on their own, ${figures.stalled} jobs handed over (stalled)`,
    `  submits: ${submitter.answers.length} answers, ${submitter.storageErrors} STORAGE_ERROR (retried), others ${json(submitter.otherAnswers())}`,
    `  drain after the last submit: ${figures.drainMs === undefined ? `not drained within ${seconds(figures.drainLimitMs)}` : seconds(figures.drainMs)}`,
    `  job attempts failed (retried by BullMQ): ${json(facts.attemptFailures)}; jobs left ${json(facts.jobsLeft)}`,
    `  runs that hit a store fault: ${facts.faulted}, completed ${facts.faultedCompleted}; unfinished at the end ${json(facts.unfinished)}; orphans ${facts.orphans}`,
    `  approvals: ${approver.approved.size} approved through pending(), approve errors ${json(approver.approveErrors)}, pending() listings failed ${approver.listingFailures}`,
    `  ledger: ${facts.effects} effects, ${facts.attempts} attempts, ${facts.repeatedCalls} calls attempted more than once`,
  ].join("\n");
}

/** "median 0.4 s, at most 0.9 s (12 restarts)". */
export function describeGaps(gaps: readonly number[]): string {
  if (gaps.length === 0) return "no restart followed by work";
  const sorted = [...gaps].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)] as number;
  return `median ${seconds(median)}, at most ${seconds(sorted.at(-1) as number)} (${sorted.length} restarts)`;
}
