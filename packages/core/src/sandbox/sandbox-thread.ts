/**
 * A sandbox thread: the body of each worker thread of `createWorkerThreadExecutor`. It runs passes
 * with its own executor (isolated-vm or QuickJS), so creating, setting up and disposing sandboxes,
 * and for QuickJS running the program itself, costs this thread, not the one running the runtime. Requests of the sandbox cross to the executor's thread,
 * which answers them (the durable log, the connectors); see sandbox-thread-protocol.ts.
 */
import { type MessagePort, parentPort, workerData } from "node:worker_threads";
import { errorMessage } from "../error-message.js";
import type { Executor, HostReply, PassResult } from "./executor.js";
import { adoptReadingGate } from "./reading-gate.js";
import type { FromSandboxThread, PassData, SandboxThreadData, ToSandboxThread } from "./sandbox-thread-protocol.js";

if (!parentPort) throw new Error("sandbox-thread.js runs as a worker thread of createWorkerThreadExecutor");
const port: MessagePort = parentPort;

// Large programs take turns with every other thread of the process (reading-gate.ts).
adoptReadingGate((workerData as SandboxThreadData).readingGate);
const data = workerData as SandboxThreadData;
const executor = await threadExecutor(data);
const board = data.abortBoard ? new Int32Array(data.abortBoard) : undefined;

/** The thread's executor, loaded for its engine only: a QuickJS thread never loads isolated-vm. */
async function threadExecutor(data: SandboxThreadData): Promise<Executor & { warm?(): Promise<void> }> {
  if (data.engine === "quickjs") {
    const { createQuickJsExecutor } = await import("./quickjs/quickjs-executor.js");
    return createQuickJsExecutor(data.options);
  }
  const { createIsolatedVmExecutor } = await import("./isolated-vm-executor.js");
  // A warm isolate's next context is made when its pass comes: the process may exit (and end this
  // thread) right after a pass answers, and must not find the thread inside an isolate's work.
  return createIsolatedVmExecutor({ ...data.options, prepareContextsAhead: false });
}
/** Requests sent to the executor's thread and not yet answered, by number. */
const awaitingReply = new Map<number, (reply: HostReply) => void>();
const passesRunning = new Set<Promise<void>>();
/** The abort of each pass running here, by number. */
const aborts = new Map<number, AbortController>();
let nextRequest = 0;

const send = (message: FromSandboxThread) => port.postMessage(message);

function runPass(pass: number, data: PassData): void {
  const abort = new AbortController();
  aborts.set(pass, abort);
  const { abortSlot, ...request } = data;
  const slot = board && abortSlot !== undefined ? abortSlot : undefined;
  const ran = executor
    .runPass({
      ...request,
      signal: abort.signal,
      ...(slot === undefined ? {} : { aborted: () => Atomics.load(board as Int32Array, slot) !== 0 }),
      onRequest: (body) =>
        new Promise<HostReply>((resolve) => {
          const number = nextRequest++;
          awaitingReply.set(number, resolve);
          send({ type: "request", pass, request: number, body });
        }),
    })
    .catch(
      (error: unknown): PassResult => ({
        status: "failed",
        code: "SANDBOX_ERROR",
        error: errorMessage(error),
        logs: [],
      }),
    )
    .then((result) => send({ type: "result", pass, result }));
  passesRunning.add(ran);
  void ran.finally(() => {
    passesRunning.delete(ran);
    aborts.delete(pass);
  });
}

async function close(): Promise<void> {
  // Ends the passes still running (each answers with its failure), then disposes every isolate.
  // A pass also waits for the host calls it started: those the executor's thread has not
  // answered yet end here, with an error nobody will see.
  await executor.close();
  for (const answer of awaitingReply.values()) answer({ kind: "error", message: "the executor was closed" });
  awaitingReply.clear();
  await Promise.allSettled([...passesRunning]);
  port.close();
}

port.on("message", (message: ToSandboxThread) => {
  switch (message.type) {
    case "pass":
      runPass(message.pass, message.request);
      return;
    case "reply": {
      const answer = awaitingReply.get(message.request);
      awaitingReply.delete(message.request);
      answer?.(message.reply);
      return;
    }
    case "abort":
      aborts.get(message.pass)?.abort(message.reason);
      return;
    case "warm":
      void (executor.warm?.() ?? Promise.resolve()).then(() => send({ type: "warm", warm: message.warm }));
      return;
    case "close":
      void close();
      return;
  }
});
