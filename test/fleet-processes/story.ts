/**
 * The fleet under fire, as a story any store setup can run (test/fleet.test.ts, and the
 * PostgreSQL schema setups of test/chaos/postgres-schemas.test.ts): three worker processes, one
 * approving process, 100 runs of five calls each (the third needs approval), and every ~2 s a
 * worker either SIGKILLed and started again or frozen (SIGSTOP) for three times its lease and
 * then woken (SIGCONT). Real child processes importing the BUILT packages.
 */
import { randomUUID } from "node:crypto";
import { type CodemodeQueue, createCodemodeQueue } from "@codemode/bullmq";
import type { CodemodeRuntime, LogEntry } from "@codemode/core";
import type { CodemodeStorage } from "@codemode/storage";
import { expect } from "vitest";
import type { BackendCase, Recorded } from "./backends.ts";
import { type Child, spawn } from "./children.ts";
import {
  type FleetConfig,
  type Ledger,
  openLedger,
  openRuntime,
  openStorage,
  PROGRAM,
  queueConnection,
} from "./shared.ts";

export const EXECUTIONS = 100;
const SUBMIT_EVERY_MS = 150;
const KILL_EVERY_MS = 2_000;
const DEADLINE_MS = 150_000;
/** How long a frozen worker stays frozen: three times the lease. */
const FREEZE_MS = 3_000;

/** Runs the story on `backend`; every check is an expectation. */
export async function fleetUnderFire(backend: BackendCase): Promise<void> {
  const space = `fleet-${randomUUID().slice(0, 8)}`;
  const config: FleetConfig = {
    backend: backend.name,
    url: backend.url,
    space,
    ...(backend.runs ? { runs: backend.runs } : {}),
    leaseMs: 1_000,
    lockDurationMs: 1_000,
    stalledIntervalMs: 500,
    concurrency: 4,
    callMs: [40, 120],
    workerId: "submitter",
  };
  await backend.prepare(space);
  const storage: CodemodeStorage = openStorage(config);
  const ledger: Ledger = await openLedger(config);
  const runtime: CodemodeRuntime = openRuntime(config, storage, ledger);
  const queue: CodemodeQueue = createCodemodeQueue({
    runtime,
    connection: queueConnection(config),
    name: space,
    retry: { delayMs: 100 },
    logger: { warn() {} },
  });
  const workers: Child[] = [];
  let approver: Child | undefined;
  const started = Date.now();
  let chaos: NodeJS.Timeout | undefined;
  const thaws = new Set<NodeJS.Timeout>();
  try {
    let stalled = 0;
    queue.events.on("stalled", () => stalled++);
    await queue.ready();
    approver = spawn("approver", { ...config, workerId: "approver" });
    await approver.message("ready");
    for (let slot = 0; slot < 3; slot++) workers.push(spawn("worker", { ...config, workerId: `w${slot}.0` }));
    await Promise.all(workers.map((worker) => worker.message("ready")));

    const fire = startChaos(workers, config, thaws);
    chaos = fire.timer;

    const ids: string[] = [];
    for (let index = 0; index < EXECUTIONS; index++) {
      const submitted = await queue.submit({ code: PROGRAM });
      if ("status" in submitted) throw new Error(`submit failed: ${submitted.code} ${submitted.error}`);
      ids.push(submitted.executionId);
      await new Promise((resolve) => setTimeout(resolve, SUBMIT_EVERY_MS));
    }

    // Every run completes (the approver approves each pause; killed passes resume elsewhere).
    const outcomes = await completedOutcomes(runtime, ids, started);
    clearInterval(chaos);
    for (const thaw of thaws) clearTimeout(thaw);
    for (const child of workers)
      if (child.process.exitCode === null && child.process.signalCode === null) child.process.kill("SIGCONT");
    const unfinished = ids.filter((id) => !outcomes.has(id));
    // Where a run stuck: its record and the jobs of its id, with the processes' last words.
    const whereStuck = await Promise.all(unfinished.map((id) => describeStuck(runtime, queue, id)));
    const lastWords = [...workers, approver].flatMap((child) => child.stderr.slice(-3)).join(" | ");
    expect(
      unfinished,
      `not completed within ${DEADLINE_MS} ms: ${whereStuck.join("; ")}; stderr: ${lastWords}`,
    ).toEqual([]);

    approver.process.send({ command: "stop" });
    const { approvals, missed } = (await approver.message("stopped")) as { approvals: number; missed: number };
    await approver.stop("SIGTERM");
    await Promise.all(workers.map((worker) => worker.stop("SIGTERM")));

    // Nothing is left running or paused.
    expect((await runtime.executions({ status: ["running", "paused"] })).items).toEqual([]);
    const expectedKeys = ids.flatMap((id) => [0, 1, 2, 3, 4].map((seq) => `${id}:${seq}`));
    await expectRunsApplied(runtime, ids, outcomes);

    const recorded = await backend.read(space);
    const attemptsPerKey = expectEffectsOnce(recorded, expectedKeys);
    // Every pause reached the approver as an event; the kills hit passes that then resumed elsewhere.
    expect(missed).toBe(0);
    expect(approvals).toBeGreaterThanOrEqual(EXECUTIONS);
    const { kills, freezes } = fire.counts;
    expect(kills).toBeGreaterThanOrEqual(3);
    expect(freezes).toBeGreaterThanOrEqual(3);
    expect(stalled).toBeGreaterThan(0);
    const repeated = [...attemptsPerKey.values()].filter((count) => count > 1).length;
    console.log(
      `${backend.name}: ${EXECUTIONS} runs completed in ${((Date.now() - started) / 1000).toFixed(1)} s; ${kills} workers killed, ${freezes} frozen for ${FREEZE_MS} ms, ${stalled} jobs handed over, ${repeated} calls attempted again (same key, effect once), ${recorded.attempts.length} attempts for ${expectedKeys.length} effects`,
    );
  } finally {
    clearInterval(chaos);
    for (const thaw of thaws) clearTimeout(thaw);
    // A worker still frozen must wake to be stopped.
    for (const child of workers)
      if (child.process.exitCode === null && child.process.signalCode === null) child.process.kill("SIGCONT");
    await Promise.all([...workers, ...(approver ? [approver] : [])].map((child) => child.stop("SIGKILL")));
    await queue.bullmq.obliterate({ force: true }).catch(() => undefined);
    await queue.close();
    await runtime.close();
    await storage.close();
    await ledger.close();
    await backend.cleanup(space);
  }
}

/**
 * Every ~2 s, round robin over the slots: kill a worker and start a new one in its place,
 * or freeze one for three leases and wake it. A frozen worker keeps its slot; it is never
 * killed while frozen (a slot's turn comes again only after the thaw). `counts` grows as it goes.
 */
function startChaos(
  workers: Child[],
  config: FleetConfig,
  thaws: Set<NodeJS.Timeout>,
): { timer: NodeJS.Timeout; counts: { kills: number; freezes: number } } {
  let rounds = 0;
  const counts = { kills: 0, freezes: 0 };
  const timer = setInterval(() => {
    const slot = rounds % workers.length;
    const victim = workers[slot] as Child;
    if (Math.floor(rounds / workers.length) % 2 === 0) {
      counts.kills++;
      victim.process.kill("SIGKILL");
      workers[slot] = spawn("worker", { ...config, workerId: `w${slot}.${rounds + 1}` });
    } else {
      counts.freezes++;
      victim.process.kill("SIGSTOP");
      const thaw = setTimeout(() => {
        thaws.delete(thaw);
        victim.process.kill("SIGCONT");
      }, FREEZE_MS);
      thaws.add(thaw);
    }
    rounds++;
  }, KILL_EVERY_MS);
  return { timer, counts };
}

type Outcomes = Map<string, Awaited<ReturnType<CodemodeRuntime["outcome"]>>>;

/** The outcome of every run of `ids` that completed, read until all have or the deadline passed. */
async function completedOutcomes(runtime: CodemodeRuntime, ids: string[], started: number): Promise<Outcomes> {
  const outcomes: Outcomes = new Map();
  while (outcomes.size < ids.length && Date.now() - started < DEADLINE_MS) {
    for (const id of ids) {
      if (outcomes.has(id)) continue;
      const outcome = await runtime.outcome(id);
      if (outcome?.status === "completed") outcomes.set(id, outcome);
    }
    if (outcomes.size < ids.length) await new Promise((resolve) => setTimeout(resolve, 500));
  }
  return outcomes;
}

/** Where a run stuck: its record and the jobs of its id. */
async function describeStuck(runtime: CodemodeRuntime, queue: CodemodeQueue, id: string): Promise<string> {
  const record = await runtime.execution(id);
  const jobs = await queue.bullmq.getJobs([
    "waiting",
    "active",
    "delayed",
    "failed",
    "completed",
    "prioritized",
    "waiting-children",
  ]);
  const own = await Promise.all(
    jobs
      .filter((job) => job.id?.includes(id))
      .map(async (job) => `${job.id}:${await job.getState()}:${job.attemptsMade}:${job.failedReason ?? ""}`),
  );
  return `${id} ${record?.status} [${(record?.log ?? []).map((entry) => `${entry.seq}:${entry.state}`).join(" ")}] jobs ${own.join(", ") || "none"}`;
}

/** Every run completed with its five results, its gated call approved by the approver, its stored log all applied. */
async function expectRunsApplied(runtime: CodemodeRuntime, ids: string[], outcomes: Outcomes): Promise<void> {
  for (const id of ids) {
    const outcome = outcomes.get(id);
    expect(outcome).toMatchObject({ status: "completed", result: [0, 1, 2, 3, 4].map((seq) => `${id}:${seq}`) });
    // The gated call carries the approver's decision on the log.
    const gated = (outcome?.calls ?? []).find((call: LogEntry) => call.seq === 2);
    expect(gated).toMatchObject({
      method: "pay",
      state: "applied",
      decision: { approved: true, by: "approver" },
    });
    // A woken worker overwrote nothing: the stored log is the five calls, every one applied.
    const stored = await runtime.execution(id);
    expect(stored?.log.map((entry) => `${entry.seq}:${entry.state}`)).toEqual([
      "0:applied",
      "1:applied",
      "2:applied",
      "3:applied",
      "4:applied",
    ]);
  }
}

/**
 * Each effect happened exactly once per idempotency key, for every call of every run, and no
 * approved call ran without its approval. Returns the attempts per key.
 */
function expectEffectsOnce(recorded: Recorded, expectedKeys: string[]): Map<string, number> {
  expect([...recorded.effects.keys()].sort()).toEqual([...expectedKeys].sort());
  const attemptsPerKey = new Map<string, number>();
  for (const attempt of recorded.attempts) attemptsPerKey.set(attempt.key, (attemptsPerKey.get(attempt.key) ?? 0) + 1);
  expect([...attemptsPerKey.keys()].sort()).toEqual([...expectedKeys].sort());
  // No approved call ran without its approval: every attempt of a gated call came after the approver recorded it.
  const gatedAttempts = recorded.attempts.filter((attempt) => attempt.gated);
  expect(gatedAttempts.length).toBeGreaterThanOrEqual(EXECUTIONS);
  for (const attempt of gatedAttempts) {
    const approvedAt = recorded.approvals.get(attempt.key);
    expect(approvedAt, `${attempt.key} ran without an approval`).toBeDefined();
    expect(attempt.at).toBeGreaterThanOrEqual(approvedAt as number);
  }
  return attemptsPerKey;
}
