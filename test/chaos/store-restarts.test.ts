/**
 * The store restarts under a running fleet. Each store gets a server of its own (own port, own
 * data folder): Redis holding the runs (`redisStorage`) and BullMQ, or PostgreSQL holding the runs
 * (`postgresStorage`) and BullMQ's PostgreSQL backend. Three worker processes run 1,000 runs
 * (CODEMODE_CHAOS_RUNS) of five calls, the third needing approval, submitted one every ~65 ms
 * through `queue.submit` (a STORAGE_ERROR answer is submitted again); an approver approves what
 * `runtime.pending()` lists. Meanwhile the store restarts every 5–10 s after 0–2 s down, by
 * SIGKILL and cleanly in turn, and every 3 s a worker is SIGKILLed (and replaced) or frozen past
 * its lease. Nobody acts as an operator: nothing calls requeue, recover or rerun. The ledger of
 * effects lives in a folder, so it stays the truth while the store is down.
 *
 * Then it asserts each line of the acceptance (checker.ts) and prints the figures. Child processes
 * import the BUILT packages: run `npm run build` first. `npm run test:chaos` runs it.
 */
import { describe, expect, it } from "vitest";
import { LEASE_MS, openChaosRun } from "./chaos-fleet.ts";
import { checkRuns, expectAcceptance } from "./checker.ts";
import { details, TABLE_HEADER, tableRow } from "./figures.ts";
import { ownServer, STORES } from "./own-server.ts";
import { backToWork, type RestartLoop, startRestartLoop } from "./restart-loop.ts";
import { sleep } from "./timing.ts";

const RUNS = Number(process.env.CODEMODE_CHAOS_RUNS ?? 1_000);
const SUBMIT_EVERY_MS = Number(process.env.CODEMODE_CHAOS_SUBMIT_EVERY_MS ?? 65);
/** How long the fleet may take to finish every run after the last submit. */
const DRAIN_MS = Number(process.env.CODEMODE_CHAOS_DRAIN_MS ?? 120_000);
const WORKER_CHAOS_EVERY_MS = 3_000;
const FREEZE_MS = 3 * LEASE_MS;

for (const store of STORES) {
  describe(`the store restarts under a fleet on ${store.label}`, () => {
    const own = ownServer(store.kind);

    it(`${RUNS} runs with approvals complete while the store restarts every 5–10 s (0–2 s down, by SIGKILL and clean) and workers are SIGKILLed and frozen`, {
      timeout: 300_000 + RUNS * (SUBMIT_EVERY_MS + 60) + DRAIN_MS,
    }, async () => {
      const server = own.server;
      if (!server) return void console.warn(`story not run: ${own.unavailable}`);
      const started = Date.now();
      const run = await openChaosRun(server);
      const { fleet, submitter, watcher, approver } = run;
      let restarts: RestartLoop | undefined;
      try {
        watcher.start(500);
        restarts = startRestartLoop(server, { upMs: [5_000, 10_000], downMs: [0, 2_000] });
        fleet.workers.startChaos(WORKER_CHAOS_EVERY_MS, FREEZE_MS);
        await submitter.submitRuns(RUNS, SUBMIT_EVERY_MS);
        const lastSubmit = submitter.lastAnswerAt;
        while (!watcher.drained() && Date.now() - lastSubmit < DRAIN_MS && fleet.workers.living > 0) await sleep(250);
        const drainMs = watcher.drained() ? Date.now() - lastSubmit : undefined;
        // The chaos ends here; a restart under way finishes first, so the store is up for the checks.
        await restarts.stop();
        fleet.workers.stopChaos();
        await approver.stop();
        await watcher.stop();

        const report = await checkRuns(fleet, submitter, approver.figures, watcher, restarts.restarts);
        const figures = {
          store: store.label,
          report,
          restarts: restarts.restarts,
          workers: fleet.workers,
          submitter,
          approver: approver.figures,
          stalled: fleet.stalled(),
          drainMs,
          drainLimitMs: DRAIN_MS,
          elapsedMs: Date.now() - started,
        };
        console.log(`${TABLE_HEADER}\n${tableRow(figures)}\n\n${details(figures)}`);
        expectAcceptance(report);
        // Back to work within a second of the store answering again (the median over the restarts:
        // a restart that comes while every worker is frozen or being replaced waits for them).
        const gaps = backToWork(restarts.restarts, report.facts.effectTimes).sort((a, b) => a - b);
        expect(gaps[Math.floor(gaps.length / 2)] ?? 0).toBeLessThanOrEqual(1_000);
        // The chaos happened (a run of 1,000 sees about ten restarts; a small one while developing, one).
        expect(restarts.restarts.length).toBeGreaterThanOrEqual(1);
        expect(fleet.workers.kills).toBeGreaterThanOrEqual(1);
        expect(fleet.workers.freezes).toBeGreaterThanOrEqual(1);
      } finally {
        await restarts?.stop().catch(() => undefined);
        await run.close();
      }
    });
  });
}
