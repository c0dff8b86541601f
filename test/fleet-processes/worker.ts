/**
 * A worker of test/fleet.test.ts: `createCodemodeWorker` over the shared store, run as its own
 * process so the test can SIGKILL it mid-pass. Reports "ready" over IPC once BullMQ is connected,
 * and every job attempt that failed ("attempt-failed": BullMQ retries it). On stderr: the
 * worker's warnings, the store's connection errors (at most one line a second), failed attempts,
 * and why the process exits.
 *
 *   node test/fleet-processes/worker.ts '<FleetConfig as JSON>'
 */
import { createCodemodeWorker } from "@codemode/bullmq";
import { openLedger, openRuntime, openStorage, queueConnection, readConfig } from "./shared.ts";

const config = readConfig();
const say = (line: string) => process.stderr.write(`${config.workerId}: ${line}\n`);
let lastStoreError = 0;
let quietStoreErrors = 0;
const storage = openStorage(config, {
  onError(error) {
    if (Date.now() - lastStoreError < 1_000) return void quietStoreErrors++;
    say(`store: ${error instanceof Error ? error.message : String(error)} (${quietStoreErrors} more before)`);
    lastStoreError = Date.now();
    quietStoreErrors = 0;
  },
});
const ledger = await openLedger(config);
const runtime = openRuntime(config, storage, ledger);
const worker = createCodemodeWorker({
  runtime,
  connection: queueConnection(config),
  name: config.space,
  concurrency: config.concurrency,
  lockDurationMs: config.lockDurationMs,
  stalledIntervalMs: config.stalledIntervalMs,
  logger: { warn: (message) => say(message) },
});
worker.on("completed", (job) => process.send?.({ event: "completed", jobId: job.id, status: job.returnvalue?.status }));
worker.on("failed", (job, error) => {
  const reason = error?.message ?? "";
  say(`job ${job?.id} attempt ${job?.attemptsMade} failed: ${reason.slice(0, 300)}`);
  process.send?.({ event: "attempt-failed", jobId: job?.id, attemptsMade: job?.attemptsMade, reason });
});
// Says what ends the process (without changing it: the process still ends as Node decides).
process.on("uncaughtExceptionMonitor", (error, origin) =>
  say(
    `${origin}: ${error instanceof Error ? (error.stack ?? error.message).split("\n").slice(0, 6).join(" ← ") : String(error)}`,
  ),
);
process.on("exit", (code) => say(`exits with code ${code}`));
try {
  await worker.waitUntilReady();
} catch (error) {
  say(`waitUntilReady rejected: ${error instanceof Error ? error.message : String(error)}`);
  throw error;
}
process.send?.({ event: "ready", workerId: config.workerId });

// A graceful stop (not what the test does to it: it kills): finish the passes under way.
process.once("SIGTERM", async () => {
  await worker.close();
  await runtime.close();
  await storage.close();
  await ledger.close();
  process.exit(0);
});
