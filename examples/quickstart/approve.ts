// Approves a quickstart run that `npm start` left paused — from a new process, with nothing but
// the SQLite file in common. The code runs again from the top: the catalog search replays from
// the log, the approved order is placed for real, and the program finishes.
//
//   npm run quickstart:approve -- <executionId>   # that run
//   npm run quickstart:approve                    # the newest paused run
import { openShop, printRecord, report } from "./shop.ts";

const { runtime, storage } = openShop();
try {
  const requested = process.argv[2];
  const pending = (await runtime.pending(requested)).items;
  const action = pending[0];
  if (!action) {
    console.log(
      requested
        ? `Execution ${requested} has no pending action (unknown, or not paused).`
        : "No paused quickstart run. Start one with `npm start`.",
    );
    process.exitCode = 1;
  } else {
    console.log(
      `Pending: ${action.connector}.${action.method}(${JSON.stringify(action.args)}) in execution ${action.executionId}`,
    );
    console.log(`\n→ runtime.approve({ executionId, seq: ${action.seq} })   (process ${process.pid})`);
    const outcome = await runtime.approve({ executionId: action.executionId, seq: action.seq, by: "quickstart user" });
    report(outcome);
    await printRecord(runtime, action.executionId);
  }
} finally {
  await runtime.close();
  await storage.close();
}
