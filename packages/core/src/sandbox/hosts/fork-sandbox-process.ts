import { type ChildProcess, fork } from "node:child_process";
import type { Socket } from "node:net";
import { FRAMES_ARGUMENT, FRAMES_FD, framesSupported } from "./frame-channel.js";
import { hostEntry } from "./host-entry.js";

/**
 * Environment variables a sandbox process gets from its parent: its settings, the time zone and
 * locale. Nothing else: a program that escaped its engine would find no secrets of the host's
 * (API keys, database URLs) in this process.
 */
const PASSED_ENVIRONMENT = /^(CODEMODE_[A-Z_]+|TZ|LANG|LC_[A-Z]+)$/;

/** A sandbox process just started, and its end of the message pipe (undefined on Bun and Deno: IPC carries messages). */
export interface ForkedSandbox {
  child: ChildProcess;
  frames: Socket | undefined;
}

/** Starts a sandbox process (hosts/sandbox-process.js) with the little it is given of this one. */
export function forkSandboxProcess(): ForkedSandbox {
  const frames = framesSupported();
  const child = fork(hostEntry("hosts/sandbox-process.js"), frames ? [`${FRAMES_ARGUMENT}${FRAMES_FD}`] : [], {
    // A small young generation: the main heap of a sandbox process holds only messages in flight.
    execArgv: ["--no-node-snapshot", "--max-semi-space-size=4"],
    env: Object.fromEntries(Object.entries(process.env).filter(([name]) => PASSED_ENVIRONMENT.test(name))),
    // Its standard output is nobody's (a parent speaking MCP over stdio owns its own); its
    // standard error is kept in part, to say why it ended. The IPC channel tells each side when
    // the other has gone; messages go over the pipe after it (FRAMES_FD), where there is one.
    stdio: frames ? ["ignore", "ignore", "pipe", "ipc", "pipe"] : ["ignore", "ignore", "pipe", "ipc"],
    serialization: "advanced",
  });
  const socket = frames ? ((child.stdio[FRAMES_FD] as Socket | null) ?? undefined) : undefined;
  // A write to a process that has just died: its exit follows and says how it ended.
  socket?.on("error", () => {});
  return { child, frames: socket };
}
