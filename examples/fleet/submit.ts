// The web process: submits runs and waits for their outcomes. It runs no pass itself.
//
//   node examples/fleet/submit.ts alice bob carol

import { createCodemodeQueue } from "@codemode/bullmq";
import type { Outcome } from "@codemode/core";
import { connection, FLEET, openFleet, program } from "./fleet.ts";

const customers = process.argv.slice(2).length > 0 ? process.argv.slice(2) : ["alice", "bob", "carol"];
const { runtime, storage } = openFleet("web");
const queue = createCodemodeQueue({ runtime, connection, name: FLEET });
try {
  const runs: Array<{ customer: string; executionId: string }> = [];
  for (const customer of customers) {
    const submitted = await queue.submit({ code: program(customer) });
    if ("status" in submitted) throw new Error(`could not submit: ${submitted.error}`);
    console.log(`[web] submitted run ${submitted.executionId.slice(0, 8)} for ${customer}`);
    runs.push({ customer, executionId: submitted.executionId });
  }
  process.send?.({ event: "submitted", runs });
  const outcomes = await Promise.all(runs.map((run) => finished(run.executionId)));
  for (const [index, outcome] of outcomes.entries()) console.log(`[web] ${customers[index]}: ${describe(outcome)}`);
  process.send?.({ event: "done", outcomes });
} finally {
  await queue.close();
  await runtime.close();
  await storage.close();
}

/** Waits through the pause: the approver decides it, then the run goes on to its end. */
async function finished(executionId: string): Promise<Outcome> {
  for (;;) {
    const outcome = await queue.waitForOutcome(executionId, { timeoutMs: 60_000 });
    if (outcome.status !== "paused") return outcome;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

function describe(outcome: Outcome): string {
  if (outcome.status === "completed") return `completed ${JSON.stringify(outcome.result)}`;
  if (outcome.status === "paused") return `paused at ${outcome.pending[0]?.method}`;
  return `${outcome.code}: ${outcome.error}`;
}
