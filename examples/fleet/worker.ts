// A worker of the fleet: takes jobs from the queue and runs passes. Start as many as you like;
// main.ts starts three and kills one mid-call.
//
//   node examples/fleet/worker.ts <workerId>
import { createCodemodeWorker } from "@codemode/bullmq";
import { connection, FLEET, LOCK_MS, openFleet, STALLED_INTERVAL_MS } from "./fleet.ts";

const workerId = process.argv[2] ?? `worker-${process.pid}`;
const { runtime, storage } = openFleet(workerId);
const worker = createCodemodeWorker({
  runtime,
  connection,
  name: FLEET,
  concurrency: 2,
  lockDurationMs: LOCK_MS,
  stalledIntervalMs: STALLED_INTERVAL_MS,
});
worker.on("active", (job) =>
  console.log(`  [${workerId}] ${job.name} job for run ${job.data.executionId.slice(0, 8)}`),
);
worker.on("completed", (job) =>
  console.log(`  [${workerId}] run ${job.data.executionId.slice(0, 8)} → ${job.returnvalue.status}`),
);
await worker.waitUntilReady();
process.send?.({ event: "ready", workerId });

// A deploy sends SIGTERM: finish the passes under way, then go.
process.once("SIGTERM", async () => {
  await worker.close();
  await runtime.close();
  await storage.close();
  process.exit(0);
});
