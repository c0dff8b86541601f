/**
 * A worker of test/fleet.test.ts: `createCodemodeWorker` over the shared store, run as its own
 * process so the test can SIGKILL it mid-pass. Reports "ready" over IPC once BullMQ is connected.
 *
 *   node test/fleet-processes/worker.ts '<FleetConfig as JSON>'
 */
import { createCodemodeWorker } from "@codemode/bullmq";
import { openLedger, openRuntime, openStorage, queueConnection, readConfig } from "./shared.ts";

const config = readConfig();
const storage = openStorage(config);
const ledger = await openLedger(config);
const runtime = openRuntime(config, storage, ledger);
const worker = createCodemodeWorker({
  runtime,
  connection: queueConnection(config),
  name: config.space,
  concurrency: config.concurrency,
  lockDurationMs: config.lockDurationMs,
  stalledIntervalMs: config.stalledIntervalMs,
  logger: { warn: (message) => process.stderr.write(`${config.workerId}: ${message}\n`) },
});
worker.on("completed", (job) => process.send?.({ event: "completed", jobId: job.id, status: job.returnvalue?.status }));
await worker.waitUntilReady();
process.send?.({ event: "ready", workerId: config.workerId });

// A graceful stop (not what the test does to it: it kills): finish the passes under way.
process.once("SIGTERM", async () => {
  await worker.close();
  await runtime.close();
  await storage.close();
  await ledger.close();
  process.exit(0);
});
