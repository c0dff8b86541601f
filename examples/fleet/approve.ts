// The approving process: an approval inbox that reacts to `paused` events without polling. Here
// it approves every refund; a real one would show it to a person and call queue.approve or
// queue.reject with their answer.
//
//   node examples/fleet/approve.ts
import { createCodemodeQueue } from "@codemode/bullmq";
import { connection, FLEET, openFleet } from "./fleet.ts";

// This runtime stores decisions and reads the store; it never runs a pass (workers do).
const { runtime, storage } = openFleet("approver");
const queue = createCodemodeQueue({ runtime, connection, name: FLEET });

async function decide(executionId: string, seq: number): Promise<void> {
  const [action] = (await runtime.pending(executionId)).items;
  if (!action || action.seq !== seq) return;
  console.log(
    `  [approver] approving ${action.connector}.${action.method}(${JSON.stringify(action.args)}) for run ${executionId.slice(0, 8)}`,
  );
  await queue.approve({ executionId, seq, by: "approver", reason: "refunds under 50 EUR are fine" });
}

queue.events.on("paused", ({ executionId, pending }) => {
  for (const call of pending) decide(executionId, call.seq).catch((error: unknown) => console.error(error));
});
// Live first, then catch up on pauses from before this process started.
await queue.ready();
for (const action of (await runtime.pending()).items) await decide(action.executionId, action.seq);
process.send?.({ event: "ready" });

process.once("SIGTERM", async () => {
  await queue.close();
  await runtime.close();
  await storage.close();
  process.exit(0);
});
