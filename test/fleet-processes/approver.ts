/**
 * The approving process of test/fleet.test.ts: reacts to `paused` events by recording its
 * approval on the ledger and queueing it (`queue.approve`). A sweep of the store every few
 * seconds approves paused runs it heard nothing about, and counts them as missed events.
 *
 *   node test/fleet-processes/approver.ts '<FleetConfig as JSON>'
 */
import { createCodemodeQueue } from "@codemode/bullmq";
import { openLedger, openRuntime, openStorage, queueConnection, readConfig } from "./shared.ts";

const config = readConfig();
const storage = openStorage(config);
const ledger = await openLedger(config);
// Stores decisions and reads the store; never runs a pass.
const runtime = openRuntime(config, storage, ledger);
const queue = createCodemodeQueue({
  runtime,
  connection: queueConnection(config),
  name: config.space,
  retry: { delayMs: 100 },
});

const heard = new Set<string>();
let approvals = 0;
let missed = 0;
async function approve(executionId: string, seq: number): Promise<void> {
  // Recorded first: the ledger proves no gated call ran before its approval existed.
  await ledger.approval(`${executionId}:${seq}`);
  const queued = await queue.approve({ executionId, seq, by: "approver", reason: "fleet test" });
  if ("status" in queued) {
    if (queued.code !== "NOT_PAUSED")
      process.stderr.write(`approve ${executionId} failed: ${queued.code} ${queued.error}\n`);
    return;
  }
  approvals++;
}

queue.events.on("paused", ({ executionId, pending }) => {
  heard.add(executionId);
  for (const call of pending)
    approve(executionId, call.seq).catch((error: unknown) => process.stderr.write(`approve: ${String(error)}\n`));
});
await queue.ready();

/** Paused runs the events did not announce: seen paused by two sweeps in a row without an event. */
const seenPaused = new Set<string>();
const sweep = setInterval(async () => {
  try {
    const { items } = await runtime.pending({ limit: 1_000 });
    for (const action of items) {
      if (heard.has(action.executionId)) continue;
      if (!seenPaused.has(action.executionId)) {
        seenPaused.add(action.executionId);
        continue;
      }
      missed++;
      heard.add(action.executionId);
      await approve(action.executionId, action.seq);
    }
  } catch (error) {
    process.stderr.write(`sweep: ${String(error)}\n`);
  }
}, 3_000);

process.on("message", async (message: { command?: string }) => {
  if (message.command !== "stop") return;
  clearInterval(sweep);
  process.send?.({ event: "stopped", approvals, missed });
  await queue.close();
  await runtime.close();
  await storage.close();
  await ledger.close();
  process.disconnect?.();
});
process.send?.({ event: "ready" });
