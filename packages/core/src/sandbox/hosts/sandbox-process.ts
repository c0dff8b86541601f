/**
 * A sandbox process: the body of each child process of `createProcessExecutor`. It serves passes
 * with its own executor (pass-server.ts) over the IPC channel; the sandbox's requests cross to
 * the runtime's process, which answers them (the durable log, the connectors). Whatever a
 * program does to this process (an abort of V8, a native loop, memory without end) ends this
 * process at worst: the parent sees it and ends the passes it ran as data.
 */
import { errorMessage } from "../../error-message.js";
import type { FromSandboxHost, ToSandboxHost } from "./host-protocol.js";
import { hostedExecutor, PassServer } from "./pass-server.js";

if (typeof process.send !== "function")
  throw new Error("sandbox-process.js runs as a child process of createProcessExecutor, with an IPC channel");

const send = (message: FromSandboxHost): void => {
  // The parent went away: the 'disconnect' handler ends this process.
  if (process.connected) process.send?.(message);
};

// A parent that died or closed the channel leaves no sandbox process behind.
process.on("disconnect", () => process.exit(0));

let server: PassServer | undefined;
/** Messages that came while the engine loaded, answered once it has. */
let early: ToSandboxHost[] | undefined = [];
process.on("message", (message: ToSandboxHost) => {
  if (server) {
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
});
