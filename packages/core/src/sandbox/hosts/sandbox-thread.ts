/**
 * A sandbox thread: the body of each worker thread of `createWorkerThreadExecutor`. It serves
 * passes with its own executor (hosts/pass-server.ts); requests of the sandbox cross to the
 * executor's thread, which answers them (the durable log, the connectors).
 */
import { type MessagePort, parentPort, workerData } from "node:worker_threads";
import { adoptReadingGate } from "../pass/reading-gate.js";
import type { FromSandboxHost, SandboxHostData, ToSandboxHost } from "./host-protocol.js";
import { hostedExecutor, PassServer } from "./pass-server.js";

if (!parentPort) throw new Error("sandbox-thread.js runs as a worker thread of createWorkerThreadExecutor");
const port: MessagePort = parentPort;

// Large programs take turns with every other thread of the process (reading-gate.ts).
const data = workerData as SandboxHostData;
adoptReadingGate(data.readingGate);
const server = new PassServer(await hostedExecutor(data), (message: FromSandboxHost) => port.postMessage(message), {
  ...(data.abortBoard ? { abortBoard: new Int32Array(data.abortBoard) } : {}),
  closed: () => port.close(),
});
port.on("message", (message: ToSandboxHost) => server.receive(message));
