import { type ChildProcess, fork } from "node:child_process";
import { readFileSync } from "node:fs";
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

/**
 * Starts a sandbox process (hosts/sandbox-process.js) with the little it is given of this one.
 * `deepStack`: give V8 the main thread's whole stack (`mainThreadStackKb`), for isolated-vm,
 * whose programs run there as they do on isolated-vm's own threads.
 */
export function forkSandboxProcess(deepStack = false): ForkedSandbox {
  const frames = framesSupported();
  const stackKb = deepStack ? mainThreadStackKb() : undefined;
  const child = fork(hostEntry("hosts/sandbox-process.js"), frames ? [`${FRAMES_ARGUMENT}${FRAMES_FD}`] : [], {
    // A small young generation: the main heap of a sandbox process holds only messages in flight.
    execArgv: [
      "--no-node-snapshot",
      "--max-semi-space-size=4",
      ...(stackKb === undefined ? [] : [`--stack-size=${stackKb}`]),
    ],
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

/** Kept below the main thread's stack limit for Node's own frames and native code under V8's. */
const STACK_MARGIN_KB = 1_024;
/** V8's own default (about 1 MB): below this nothing is gained. */
const V8_DEFAULT_STACK_KB = 984;
/** The most given to V8, whatever the limit: isolated-vm's threads have no more on common systems. */
const MOST_STACK_KB = 32_768;
/** What an unlimited stack is taken to be: the 8 MiB threads get by default on Linux. */
const UNLIMITED_STACK_KB = 8_192;

/**
 * V8's stack size for a sandbox process's main thread (`--stack-size`, in KiB), from the process's
 * stack limit (RLIMIT_STACK, read on Linux from /proc/self/limits, or given): the limit less a
 * margin. A pass that runs alone in its process runs its program on that thread (compiles,
 * starts it and delivers replies there, without hops to isolated-vm's threads); with V8's default
 * of about 1 MB, a program could recurse about a tenth as deep there as on isolated-vm's threads,
 * whose stacks are the limit's size. Undefined where the limit is not known or is small: V8's
 * default then holds.
 */
export function mainThreadStackKb(limits?: string): number | undefined {
  let text = limits;
  if (text === undefined) {
    try {
      text = readFileSync("/proc/self/limits", "utf8");
    } catch {
      return undefined;
    }
  }
  const soft = /^Max stack size\s+(\S+)/m.exec(text)?.[1];
  if (soft === undefined) return undefined;
  const limitKb = soft === "unlimited" ? UNLIMITED_STACK_KB : Math.floor(Number(soft) / 1_024);
  if (!Number.isFinite(limitKb)) return undefined;
  const stackKb = Math.min(limitKb - STACK_MARGIN_KB, MOST_STACK_KB);
  return stackKb > V8_DEFAULT_STACK_KB ? stackKb : undefined;
}
