/**
 * A sandbox process: the body of each child process of `createProcessExecutor`. It serves passes
 * with its own executor (pass-server.ts) over its pipe to the parent (frame-channel.ts; Node's
 * IPC channel on Bun and Deno); the sandbox's requests cross to the runtime's process, which
 * answers them (the durable log, the connectors). Whatever a program does to this process (an
 * abort of V8, a native loop, memory without end) ends this process at worst: the parent sees it
 * and ends the passes it ran as data.
 */
import { Socket } from "node:net";
import { errorMessage } from "../../error-message.js";
import { FRAMES_ARGUMENT, FramedPipe, SpinPolicy } from "./frame-channel.js";
import type { FromSandboxHost, ToSandboxHost } from "./host-protocol.js";
import { hostedExecutor, PassServer } from "./pass-server.js";

if (typeof process.send !== "function")
  throw new Error("sandbox-process.js runs as a child process of createProcessExecutor, with an IPC channel");

/**
 * How long the process spins for the reply to a tool call before it sleeps until the reply comes
 * (frame-channel.ts `SpinPolicy`): a call answered from memory comes back well within it.
 */
const SPIN_BUDGET_MS = 0.25;

// A parent that died or closed the channel leaves no sandbox process behind.
process.on("disconnect", () => process.exit(0));

const framesFd = process.argv.find((argument) => argument.startsWith(FRAMES_ARGUMENT));
const pipe = framesFd === undefined ? undefined : openPipe(Number(framesFd.slice(FRAMES_ARGUMENT.length)));
const spin = new SpinPolicy(SPIN_BUDGET_MS);
let requestSentAt = 0;
let spinQueued = false;

const send = (message: FromSandboxHost): void => {
  if (pipe) pipe.send(message);
  // The parent went away: the 'disconnect' handler ends this process.
  else if (process.connected) process.send?.(message);
  if (message.type === "request") {
    requestSentAt = performance.now();
    queueSpin();
  }
};

let server: PassServer | undefined;
/** Messages that came while the engine loaded, answered once it has. */
let early: ToSandboxHost[] | undefined = [];

function receive(message: ToSandboxHost): void {
  if (server) {
    if (message.type === "reply") spin.replied(performance.now() - requestSentAt);
    server.receive(message);
    return;
  }
  if (message.type === "close") process.exit(0);
  if (message.type !== "start") {
    early?.push(message);
    return;
  }
  hostedExecutor(message.data, true)
    .then(async (executor) => {
      // The engine's code is loaded before the process says it is ready: a first pass must not
      // spend its own time limit on it.
      await executor.warm?.();
      return executor;
    })
    .then(
      (executor) => {
        const started = new PassServer(executor, send, { closed: () => process.disconnect(), aloneOwnsThread: true });
        server = started;
        send({ type: "ready" });
        for (const message of early ?? []) started.receive(message);
        early = undefined;
      },
      (error: unknown) => {
        send({ type: "unusable", message: errorMessage(error) });
        process.disconnect();
      },
    );
}

/**
 * Once the work that sent a request is done (the program is now waiting for its reply: a request
 * is sent from inside the sandbox, so this runs as soon as the sandbox has returned), spins for
 * the reply when the pass runs alone here: its delivery is then queued for the next turn of the
 * loop at once, rather than after the process has slept and been woken for it.
 */
function queueSpin(): void {
  if (!pipe || spinQueued || !spin.shouldSpin) return;
  spinQueued = true;
  queueMicrotask(() => {
    spinQueued = false;
    if (server?.waitingAlone && spin.shouldSpin) pipe.spinFor(spin.budgetMs);
  });
}

function openPipe(fd: number): FramedPipe {
  const socket = new Socket({ fd, readable: true, writable: true });
  // The parent closed its end (it ended, or ended this process's work): nothing is left to serve.
  socket.on("end", () => process.exit(0));
  socket.on("error", () => process.exit(0));
  return new FramedPipe(
    socket,
    (message) => receive(message as ToSandboxHost),
    (error) => {
      process.stderr.write(`sandbox process: ${errorMessage(error)}\n`);
      process.exit(70);
    },
    fd,
  );
}

if (!pipe) process.on("message", (message: ToSandboxHost) => receive(message));
