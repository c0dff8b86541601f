/**
 * A submit at the moment the store goes down. On a server of its own (Redis: runs and BullMQ on
 * it; PostgreSQL: runs and BullMQ's PostgreSQL backend on it), with three workers and an approver
 * running, 20 times (CODEMODE_CHAOS_OUTAGES): three submit loops start, and 20–120 ms later the
 * server is SIGKILLed under the submits in flight; it comes back after 0–500 ms and the loops stop. A
 * submit answers what it answers (nothing retries it, nobody acts as an operator). Once the fleet
 * has drained, every execution id handed out — by an accepted submit or inside an error outcome —
 * is completed or absent from the store: none is left `running` without a job, `paused`, `error`,
 * or missing from the listing. Child processes import the BUILT packages: `npm run build` first.
 */
import { describe, expect, it } from "vitest";
import { openChaosRun } from "./chaos-fleet.ts";
import { checkRuns, expectAcceptance } from "./checker.ts";
import { ownServer, STORES } from "./own-server.ts";
import { type Restart, seconds } from "./restart-loop.ts";
import { sleep, within } from "./timing.ts";

const OUTAGES = Number(process.env.CODEMODE_CHAOS_OUTAGES ?? 20);
const SUBMIT_LOOPS = 3;
const SUBMIT_EVERY_MS = 10;
/** A submit that has not answered by then is counted as never answering (its id unknown). */
const ANSWER_MS = 30_000;
const DRAIN_MS = Number(process.env.CODEMODE_CHAOS_DRAIN_MS ?? 60_000);

for (const store of STORES) {
  describe(`a submit at the moment ${store.label} goes down`, () => {
    const own = ownServer(store.kind);

    it(`${OUTAGES} times the store is SIGKILLed under submits in flight: every id handed out ends completed or absent, nothing running without a job, nothing unlisted`, {
      timeout: 120_000 + OUTAGES * 5_000 + DRAIN_MS,
    }, async () => {
      const server = own.server;
      if (!server) return void console.warn(`story not run: ${own.unavailable}`);
      const started = Date.now();
      const run = await openChaosRun(server);
      const { fleet, submitter, watcher, approver } = run;
      const inFlightAtKill: number[] = [];
      const restarts: Restart[] = [];
      let unanswered = 0;
      try {
        watcher.start(500);
        for (let outage = 0; outage < OUTAGES; outage++) {
          let killed = false;
          let inFlight = 0;
          const loops = Array.from({ length: SUBMIT_LOOPS }, async () => {
            while (!killed) {
              inFlight++;
              const answered = await within(submitter.submitOnce(), ANSWER_MS);
              inFlight--;
              if (!answered) unanswered++;
              await sleep(SUBMIT_EVERY_MS);
            }
          });
          // The kill lands anywhere in a submit: before, between or during its writes and its job.
          await sleep(20 + Math.random() * 100);
          for (const until = Date.now() + 200; inFlight === 0 && Date.now() < until; )
            await new Promise((resolve) => setImmediate(resolve));
          killed = true;
          inFlightAtKill.push(inFlight);
          const restart: Restart = { mode: "kill", at: Date.now(), downMs: 0, unavailableMs: Number.POSITIVE_INFINITY };
          restarts.push(restart);
          await server.stop("kill");
          await sleep(Math.random() * 500);
          restart.downMs = Date.now() - restart.at;
          await server.start();
          restart.unavailableMs = Date.now() - restart.at;
          // Submits waiting on a client's offline queue answer once it reconnects.
          await Promise.all(loops);
          await sleep(300);
          if ((outage + 1) % 10 === 0)
            console.log(
              `${store.label}: ${outage + 1} kills, ${submitter.answers.length} submits answered, at ${seconds(Date.now() - started)}`,
            );
        }
        const lastSubmit = submitter.lastAnswerAt;
        while (!watcher.drained() && Date.now() - lastSubmit < DRAIN_MS && fleet.workers.living > 0) await sleep(250);
        const drainMs = watcher.drained() ? Date.now() - lastSubmit : undefined;
        await approver.stop();
        await watcher.stop();
        console.log(`${store.label}: checking, at ${seconds(Date.now() - started)}`);

        const report = await checkRuns(fleet, submitter, approver.figures, watcher, restarts);
        if (unanswered > 0)
          report.problems.orphans.push(`${unanswered} submits did not answer within ${seconds(ANSWER_MS)}`);
        const answers: Record<string, number> = {};
        for (const { answer } of submitter.answers) answers[answer] = (answers[answer] ?? 0) + 1;
        console.log(
          [
            `${store.label}: ${OUTAGES} kills under ${inFlightAtKill.reduce((sum, count) => sum + count, 0)} submits in flight; ${submitter.answers.length} submits answered ${JSON.stringify(answers)}`,
            `  ${report.facts.handedOut} ids handed out: ${report.facts.completed} completed, ${report.facts.absent} absent, unfinished ${JSON.stringify(report.facts.unfinished)}; orphans ${report.facts.orphans}`,
            `  drain after the last submit: ${drainMs === undefined ? `not drained within ${seconds(DRAIN_MS)}` : seconds(drainMs)}; worker deaths ${fleet.workers.deaths.length}; job attempts failed ${JSON.stringify(report.facts.attemptFailures)}; jobs left ${JSON.stringify(report.facts.jobsLeft)}; in ${seconds(Date.now() - started)}`,
          ].join("\n"),
        );
        expectAcceptance(report);
        // The kills landed on submits in flight.
        expect(inFlightAtKill.filter((count) => count > 0).length).toBeGreaterThan(OUTAGES / 2);
      } finally {
        await run.close();
      }
    });
  });
}
