/**
 * The bare isolate lifecycle of one pass (new isolate, context, compile and run a tiny script,
 * dispose) in a loop, for bench/isolates.bench.ts. Run as a child process
 * (`node bench/isolate-loop.ts <count>`, prints the lifecycles per second) or as a worker thread
 * (workerData `{ count }`, posts the same number).
 */

import { performance } from "node:perf_hooks";
import { isMainThread, parentPort, workerData } from "node:worker_threads";
import ivm from "isolated-vm";

/** Lifecycles per second over `count` sequential lifecycles. */
export async function lifecycles(count: number): Promise<number> {
  const started = performance.now();
  for (let index = 0; index < count; index++) {
    const isolate = new ivm.Isolate({ memoryLimit: 128 });
    const context = await isolate.createContext();
    const script = await isolate.compileScript("[1, 2, 3].map((n) => n * 2).join()");
    if ((await script.run(context)) !== "2,4,6") throw new Error("the isolate answered wrongly");
    isolate.dispose();
  }
  return (count / (performance.now() - started)) * 1_000;
}

if (!isMainThread && parentPort) {
  parentPort.postMessage(await lifecycles((workerData as { count: number }).count));
} else if (process.argv[1] && import.meta.filename === process.argv[1]) {
  console.log(String(await lifecycles(Number(process.argv[2] ?? 100))));
}
