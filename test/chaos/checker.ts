/**
 * What a chaos test asserts at the end, read from the store, the queue, the ledger and the
 * processes: for each acceptance line of the store-restart issue, the problems found (none when it
 * holds), and the facts the figures are made of.
 */
import { approveJobId, runJobId } from "@codemode/bullmq";
import type { ExecutionState, ExecutionStatus } from "@codemode/core";
import { expect } from "vitest";
import type { Recorded } from "../fleet-processes/backends.ts";
import { readFileLedger } from "../fleet-processes/file-ledger.ts";
import type { ChaosFleet, RunWatcher } from "./chaos-fleet.ts";
import type { ApproverFigures } from "./pending-approver.ts";
import type { Restart } from "./restart-loop.ts";
import type { Submitter } from "./submitter.ts";
import { sleep } from "./timing.ts";

export const ACCEPTANCE = {
  completed: "every run ends completed (none left running, paused unseen or unlisted)",
  effects: "each effect once per idempotency key",
  approvals: "every approval applied exactly once",
  pending: "runtime.pending() listed every pause while it lasted",
  deaths: "no worker process died",
  orphans: "no submit orphaned a run",
  faults: "runs that hit a store fault completed without an operator",
} as const;
export type AcceptanceLine = keyof typeof ACCEPTANCE;

export interface CheckFacts {
  handedOut: number;
  accepted: number;
  completed: number;
  absent: number;
  /** Final status (with the error code) of every id handed out that did not complete. */
  unfinished: Record<string, number>;
  orphans: number;
  /** Runs that met a store fault: a job attempt failed with STORAGE_ERROR, or the run was seen in `error`. */
  faulted: number;
  faultedCompleted: number;
  /** Failed job attempts (BullMQ retried them), by code. */
  attemptFailures: Record<string, number>;
  /** Jobs left in BullMQ, by state. */
  jobsLeft: Record<string, number>;
  attempts: number;
  effects: number;
  /** When each effect happened (epoch ms), in order: when the fleet did work. */
  effectTimes: number[];
  /** Calls attempted more than once (same key; the effect once). */
  repeatedCalls: number;
}

export interface CheckReport {
  problems: Record<AcceptanceLine, string[]>;
  facts: CheckFacts;
}

const CALLS = [0, 1, 2, 3, 4];
const GATED_SEQ = 2;

/** What the checks read once, when the fleet is done: the states, the listings, and how to describe a run. */
interface Readings {
  handedOut: string[];
  accepted: Set<string>;
  /** What each submit answered. */
  answerOf: Map<string | undefined, string>;
  states: Map<string, ExecutionState | null>;
  listed: Array<{ id: string; status: ExecutionStatus }>;
  /** `executionId:seq` of every action runtime.pending() lists. */
  pendingListed: Set<string>;
  pausedRows: Set<string>;
  runningRows: Set<string>;
  /** A run in full (state, log, listing, jobs), for the first 60 described; after that, its state alone. */
  describe(id: string): Promise<string>;
}

export async function checkRuns(
  fleet: ChaosFleet,
  submitter: Submitter,
  approver: ApproverFigures,
  watcher: RunWatcher,
  restarts: Restart[] = [],
): Promise<CheckReport> {
  const problems: Record<AcceptanceLine, string[]> = {
    completed: [],
    effects: [],
    approvals: [],
    pending: [],
    deaths: [],
    orphans: [],
    faults: [],
  };
  const readings = await readRuns(fleet, submitter);
  const { handedOut, accepted, states } = readings;
  const unfinished = await checkCompleted(readings, problems);
  const recorded: Recorded = await readFileLedger(fleet.config.ledgerDir as string);
  checkEffects(states, recorded, problems);
  const attemptsByKey = checkApprovals(readings, recorded, approver, problems);
  for (const death of fleet.workers.deaths)
    problems.deaths.push(
      `${death.workerId} exited on its own (code ${death.code}, signal ${death.signal}) ${((death.at - death.startedAt) / 1000).toFixed(1)} s after it started, ${death.wasReady ? "after" : "before"} it was ready; started ${storeAt(restarts, death.startedAt)}, died ${storeAt(restarts, death.at)}; last stderr: ${death.stderr.join(" | ")}`,
    );
  const orphans = await checkOrphans(readings, problems);
  const { attemptFailures, faulted, faultedCompleted } = await checkFaults(fleet, watcher, readings, problems);

  const counts = await fleet.queue.bullmq.getJobCounts("waiting", "active", "delayed", "prioritized", "failed");
  const jobsLeft = Object.fromEntries(Object.entries(counts).filter(([, count]) => count > 0));
  const perKey = [...attemptsByKey.values()].map((attempts) => attempts.length);
  return {
    problems,
    facts: {
      handedOut: handedOut.length,
      accepted: accepted.size,
      completed: [...states.values()].filter((state) => state?.status === "completed").length,
      absent: [...states.values()].filter((state) => state === null).length,
      unfinished,
      orphans,
      faulted: faulted.size,
      faultedCompleted,
      attemptFailures,
      jobsLeft,
      attempts: recorded.attempts.length,
      effects: recorded.effects.size,
      effectTimes: [...recorded.effects.values()].map((effect) => effect.at).sort((a, b) => a - b),
      repeatedCalls: perKey.filter((count) => count > 1).length,
    },
  };
}

/** Reads every id handed out, then the listings (pending() first), once the fleet is done. */
async function readRuns(fleet: ChaosFleet, submitter: Submitter): Promise<Readings> {
  const { runtime } = fleet;
  const handedOut = submitter.handedOut;
  const accepted = new Set(submitter.accepted);
  const answerOf = new Map(
    submitter.answers.map((answer) => [
      answer.executionId,
      answer.error ? `${answer.answer} "${answer.error.slice(0, 160)}"` : answer.answer,
    ]),
  );
  const states = await readStates(handedOut, (id) => runtime.execution(id));
  // pending() first: a full listing repairs the rows it meets that lag behind their run.
  const pendingListed = new Set(
    (await listAll((cursor) => runtime.pending({ limit: 1_000, ...(cursor ? { cursor } : {}) }))).map(
      (action) => `${action.executionId}:${action.seq}`,
    ),
  );
  // Then the paused rows alone, then the running ones (a listing repairs only the rows it meets).
  const pausedRows = new Set(
    (
      await listAll((cursor) => runtime.executions({ status: "paused", limit: 1_000, ...(cursor ? { cursor } : {}) }))
    ).map((summary) => summary.id),
  );
  const runningRows = new Set(
    (
      await listAll((cursor) => runtime.executions({ status: "running", limit: 1_000, ...(cursor ? { cursor } : {}) }))
    ).map((summary) => summary.id),
  );
  const listed = await listAll((cursor) => runtime.executions({ limit: 1_000, ...(cursor ? { cursor } : {}) }));
  // The first 60 runs in full (state, log, listing, jobs); after that, the state alone.
  const descriptions = new Map<string, Promise<string>>();
  const describe = (id: string) => {
    const state = states.get(id) ?? null;
    const known = descriptions.get(id);
    if (known) return known;
    if (descriptions.size >= 60)
      return Promise.resolve(`${id} (submit: ${answerOf.get(id)}) is ${state ? state.status : "absent"}`);
    const description = describeRun(fleet, id, state, listed, answerOf.get(id));
    descriptions.set(id, description);
    return description;
  };
  return { handedOut, accepted, answerOf, states, listed, pendingListed, pausedRows, runningRows, describe };
}

/**
 * Every accepted run completed and is listed so; nothing is left listed running or paused.
 * Returns how many of the ids handed out did not complete, by final status.
 */
async function checkCompleted(
  readings: Readings,
  problems: Record<AcceptanceLine, string[]>,
): Promise<Record<string, number>> {
  const { handedOut, accepted, states, listed, describe } = readings;
  const listedStatus = new Map(listed.map((summary) => [summary.id, summary.status]));
  const unfinished: Record<string, number> = {};
  for (const id of handedOut) {
    const state = states.get(id) ?? null;
    if (state?.status === "completed" || (state === null && !accepted.has(id))) continue;
    const status = state ? `${state.status}${state.errorCode ? `/${state.errorCode}` : ""}` : "absent";
    unfinished[status] = (unfinished[status] ?? 0) + 1;
    if (accepted.has(id)) problems.completed.push(await describe(id));
  }
  for (const [id, state] of states) {
    if (state && listedStatus.get(id) !== state.status)
      problems.completed.push(`${id} is ${state.status} but listed ${listedStatus.get(id) ?? "nowhere"}`);
  }
  const stillOpen = listed.filter((summary) => summary.status === "running" || summary.status === "paused");
  for (const summary of stillOpen)
    if (!states.has(summary.id))
      problems.completed.push(`${summary.id} (never handed out) is listed ${summary.status}`);
  return unfinished;
}

/** Each effect once per key: every call of every completed run applied, nothing else. */
function checkEffects(
  states: Map<string, ExecutionState | null>,
  recorded: Recorded,
  problems: Record<AcceptanceLine, string[]>,
): void {
  const expected = new Set<string>();
  for (const [id, state] of states)
    if (state?.status === "completed") for (const seq of CALLS) expected.add(`${id}:${seq}`);
  for (const key of expected) if (!recorded.effects.has(key)) problems.effects.push(`${key}: no effect`);
  // A run not completed is reported above; an effect whose run is absent from the store is not owned by any run.
  for (const key of recorded.effects.keys())
    if (!states.get(key.slice(0, key.lastIndexOf(":")))) problems.effects.push(`${key}: an effect of no stored run`);
  for (const [id, state] of states) {
    if (state?.status !== "completed") continue;
    const keys = CALLS.map((seq) => `${id}:${seq}`);
    if (JSON.stringify(state.result) !== JSON.stringify(keys))
      problems.effects.push(`${id}: result ${JSON.stringify(state.result)}`);
    const log = state.log.map((entry) => `${entry.seq}:${entry.state}`).join(" ");
    if (log !== CALLS.map((seq) => `${seq}:applied`).join(" ")) problems.effects.push(`${id}: log [${log}]`);
  }
}

/**
 * Every approval applied once, by the approver, after the ledger recorded it; found through
 * pending(). Returns the ledger's attempts by key.
 */
function checkApprovals(
  readings: Readings,
  recorded: Recorded,
  approver: ApproverFigures,
  problems: Record<AcceptanceLine, string[]>,
): Map<string, Recorded["attempts"]> {
  const { states, pendingListed, pausedRows, runningRows } = readings;
  const attemptsByKey = new Map<string, Recorded["attempts"]>();
  for (const attempt of recorded.attempts)
    attemptsByKey.set(attempt.key, [...(attemptsByKey.get(attempt.key) ?? []), attempt]);
  for (const [id, state] of states) {
    if (!state) continue;
    const key = `${id}:${GATED_SEQ}`;
    if (state.status === "completed") {
      const gated = state.log.find((entry) => entry.seq === GATED_SEQ);
      if (gated?.state !== "applied" || gated.decision?.approved !== true || gated.decision.by !== "approver")
        problems.approvals.push(`${key}: ${JSON.stringify({ state: gated?.state, decision: gated?.decision })}`);
      const approvedAt = recorded.approvals.get(key);
      if (approvedAt === undefined) problems.approvals.push(`${key}: applied without an approval on the ledger`);
      for (const attempt of attemptsByKey.get(key) ?? [])
        if (approvedAt !== undefined && attempt.at < approvedAt)
          problems.approvals.push(`${key}: attempted by ${attempt.worker} before its approval`);
      if (!approver.asked.has(key))
        problems.pending.push(`${key}: completed, but the approver never found it in runtime.pending()`);
    } else if (state.status === "paused") {
      const seen = approver.approved.has(key)
        ? "approved through pending() but the approval never ran"
        : approver.asked.has(key)
          ? "asked through pending(), never accepted"
          : "never approved";
      problems.pending.push(
        `${key}: still paused; ${seen}; ${pendingListed.has(key) ? "listed" : "NOT listed"} by runtime.pending() now; its listing row was ${pausedRows.has(id) ? "under paused" : `NOT under paused (${runningRows.has(id) ? "under running" : "elsewhere"})`} before a listing repaired it`,
      );
    }
  }
  for (const key of approver.notPaused)
    problems.approvals.push(`${key}: listed by pending() but queue.approve answered NOT_PAUSED`);
  return attemptsByKey;
}

/** Orphans: an id handed out, present in the store, and not completed. Returns how many. */
async function checkOrphans(readings: Readings, problems: Record<AcceptanceLine, string[]>): Promise<number> {
  const { handedOut, states, describe } = readings;
  let orphans = 0;
  for (const id of handedOut) {
    const state = states.get(id) ?? null;
    if (state === null || state.status === "completed") continue;
    orphans++;
    problems.orphans.push(await describe(id));
  }
  return orphans;
}

/** Runs that met a store fault completed on their own (nothing here calls requeue, recover or rerun). */
async function checkFaults(
  fleet: ChaosFleet,
  watcher: RunWatcher,
  readings: Readings,
  problems: Record<AcceptanceLine, string[]>,
): Promise<{ attemptFailures: Record<string, number>; faulted: Set<string>; faultedCompleted: number }> {
  const { handedOut, answerOf, states, describe } = readings;
  const attemptFailures: Record<string, number> = {};
  const faulted = new Set<string>(watcher.sawError.keys());
  for (const failure of fleet.workers.messages("attempt-failed")) {
    const reason = String(failure.reason ?? "");
    const code = /^([A-Z_]+):/.exec(reason)?.[1] ?? "other";
    attemptFailures[code] = (attemptFailures[code] ?? 0) + 1;
    const id = /^(?:run|approve)_([^_]+)/.exec(String(failure.jobId ?? ""))?.[1];
    if (id && code === "STORAGE_ERROR") faulted.add(id);
  }
  for (const id of handedOut) if (answerOf.get(id)?.startsWith("STORAGE_ERROR") && states.get(id)) faulted.add(id);
  let faultedCompleted = 0;
  for (const id of faulted) {
    if (states.get(id)?.status === "completed") faultedCompleted++;
    else
      problems.faults.push(
        `${await describe(id)}${watcher.sawError.has(id) ? `; seen error/${watcher.sawError.get(id)}` : ""}`,
      );
  }
  return { attemptFailures, faulted, faultedCompleted };
}

/** Where the store stood at `time`: down (in which restart), or up since when. */
function storeAt(restarts: Restart[], time: number): string {
  const index = restarts.findIndex((restart) => time >= restart.at && time < restart.at + restart.unavailableMs);
  if (index >= 0) return `while the store was down (restart ${index + 1}, ${restarts[index]?.mode})`;
  const before = restarts.filter((restart) => restart.at + restart.unavailableMs <= time).at(-1);
  return before
    ? `${((time - before.at - before.unavailableMs) / 1000).toFixed(1)} s after the store came back`
    : "before any restart";
}

/** Where a run stands: its state and log, whether the listing has it, and its jobs. */
async function describeRun(
  fleet: ChaosFleet,
  id: string,
  state: ExecutionState | null,
  listed: Array<{ id: string; status: ExecutionStatus }>,
  answer: string | undefined,
): Promise<string> {
  const jobs: string[] = [];
  for (const jobId of [runJobId(id), approveJobId(id, GATED_SEQ)]) {
    const job = await fleet.queue.bullmq.getJob(jobId).catch(() => undefined);
    if (!job) continue;
    const jobState = await job.getState().catch(() => "?");
    jobs.push(
      `${jobId} ${jobState} after ${job.attemptsMade} attempts${job.failedReason ? ` (${job.failedReason})` : ""}`,
    );
  }
  const status = state ? `${state.status}${state.errorCode ? ` ${state.errorCode}: ${state.error}` : ""}` : "absent";
  const log = state ? state.log.map((entry) => `${entry.seq}:${entry.state}`).join(" ") : "";
  const listing = listed.find((summary) => summary.id === id)?.status ?? "unlisted";
  return `${id} (submit: ${answer ?? "?"}) is ${status} [${log}], listed ${listing}, jobs: ${jobs.join("; ") || "none"}`;
}

/** Each id's state, reading again while the store answers with an error. */
async function readStates(
  ids: string[],
  read: (id: string) => Promise<ExecutionState | null>,
): Promise<Map<string, ExecutionState | null>> {
  const states = new Map<string, ExecutionState | null>();
  for (let at = 0; at < ids.length; at += 25)
    await Promise.all(ids.slice(at, at + 25).map(async (id) => states.set(id, await again(() => read(id)))));
  return states;
}

async function listAll<T>(page: (cursor?: string) => Promise<{ items: T[]; cursor?: string }>): Promise<T[]> {
  const items: T[] = [];
  let cursor: string | undefined;
  do {
    const next: { items: T[]; cursor?: string } = await again(() => page(cursor));
    items.push(...next.items);
    cursor = next.cursor;
  } while (cursor);
  return items;
}

/** The store is up when the checks run; a read that fails is tried again a few times. */
async function again<T>(read: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await read();
    } catch (error) {
      if (attempt >= 10) throw error;
      await sleep(500);
    }
  }
}

/** One soft expectation per acceptance line, each naming how many problems it found and the first few. */
export function expectAcceptance(report: CheckReport): void {
  for (const [line, problems] of Object.entries(report.problems) as Array<[AcceptanceLine, string[]]>) {
    const shown = problems.slice(0, 8).join("\n    ");
    const more = problems.length > 8 ? "\n    …" : "";
    expect
      .soft(problems.length, `${ACCEPTANCE[line]}: ${problems.length} found${shown ? `:\n    ${shown}${more}` : ""}`)
      .toBe(0);
  }
}
