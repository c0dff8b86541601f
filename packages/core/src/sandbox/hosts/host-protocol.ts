/**
 * Messages between an executor and the sandbox host that runs its passes elsewhere: a sandbox
 * thread (thread-host.ts, sandbox-thread.ts) or a sandbox process (process-host.ts,
 * sandbox-process.ts). A pass crosses as its request without `onRequest`; each request the
 * sandbox makes crosses back to the side that owns the pass's callbacks, and its reply forth.
 * Everything here is plain data: copied by the structured clone of `postMessage` to a thread,
 * written as JSON on the IPC channel to a process.
 */
import type { HostReply, PassRequest, PassResult, SandboxRequest } from "../executor.js";
import type { IsolatedVmExecutorOptions } from "../isolated-vm/isolated-vm-executor.js";
import type { QuickJsExecutorOptions } from "../quickjs/quickjs-executor.js";
import { replayText } from "../sandbox-config.js";

/** A pass as it crosses to a sandbox host: everything but the callbacks and the signal. */
export type PassData = Omit<PassRequest, "onRequest" | "signal" | "aborted" | "ownsThread" | "replay" | "readAhead"> & {
  /** Its slot on the thread's abort board, when it got one (see `SandboxHostData.abortBoard`). */
  abortSlot?: number;
  /** The preload as JSON text (sandbox-config.ts `replayText`): one string to copy, not an object per entry. */
  replayText?: string;
};

/**
 * The longest program a host reads ahead (`Executor.anticipate`): a usual program takes well
 * under a millisecond to read, and a host never spends long on a pass that may not come.
 */
export const READ_AHEAD_MAX_CHARS = 32_768;

/** Whether a host reads `code` ahead of its pass. */
export function readsAhead(code: string): boolean {
  return code.length <= READ_AHEAD_MAX_CHARS;
}

/** A pass as it crosses to a sandbox host (a process or a thread): the preload as one JSON text, no callbacks. */
export function passData(request: PassRequest): PassData {
  const {
    onRequest: _onRequest,
    signal: _signal,
    aborted: _aborted,
    ownsThread: _ownsThread,
    replay,
    alone: _alone,
    started: _started,
    readAhead: _readAhead,
    ...rest
  } = request;
  return { ...rest, ...(replay && replay.length > 0 ? { replayText: replayText(replay) } : {}) };
}

/** The sandbox a host runs passes in. */
export type EngineName = "isolated-vm" | "quickjs";

/** What a sandbox host is started with (a thread's `workerData`, a process's first message). */
export interface SandboxHostData {
  /** Which sandbox the host runs passes in. */
  engine: EngineName;
  options: IsolatedVmExecutorOptions & QuickJsExecutorOptions;
  /**
   * Threads only: one Int32 per slot, set to 1 when the pass holding the slot is aborted: a
   * QuickJS pass runs on the thread itself, so while its program loops the thread reads no
   * message, but its interrupt handler reads the board. (A process host has no shared memory
   * with its parent: a pass that does not answer an abort is ended with its process.)
   */
  abortBoard?: SharedArrayBuffer;
  /** Threads only: the process's count of large programs being read (reading-gate.ts), shared by every thread. */
  readingGate?: SharedArrayBuffer;
}

/** What a sandbox host counts, for whoever watches its load (the load test, `stats()`). */
export interface SandboxHostStats {
  passesRunning: number;
  /** isolated-vm isolates or QuickJS module instances not yet disposed. */
  sandboxesLive: number;
  /** Passes whose program the host had read before they came (`Executor.anticipate`). */
  passesReadAhead?: number;
}

/** From the executor to a sandbox host. */
export type ToSandboxHost =
  /** Processes only, first of all: what to run passes with. */
  | { type: "start"; data: SandboxHostData }
  /**
   * A pass of this program is about to come (`Executor.anticipate`): read it now, while the
   * runtime does its own work before the pass. Sent only to a host running no pass.
   */
  | { type: "expect"; code: string }
  | { type: "pass"; pass: number; request: PassData }
  /** The answer to request `request` (numbered by the host). */
  | { type: "reply"; request: number; reply: HostReply }
  /** Pass `pass` was aborted (its run was cancelled): end it now. */
  | { type: "abort"; pass: number; reason: string }
  /** Resolve `warm` once the isolates prepared ahead are ready. */
  | { type: "warm"; warm: number }
  /** Answer with the host's counts. */
  | { type: "stats"; stats: number }
  /** The host's last passes are under way: keep no sandbox warm for later ones. */
  | { type: "retire" }
  /** End every pass, dispose every isolate, then end the host. */
  | { type: "close" };

/** From a sandbox host to the executor. */
export type FromSandboxHost =
  /** Processes only: the host loaded its engine and takes passes. */
  | { type: "ready" }
  /** Processes only: the engine could not be loaded; the host ends. */
  | { type: "unusable"; message: string }
  | { type: "request"; pass: number; request: number; body: SandboxRequest }
  | { type: "result"; pass: number; result: PassResult }
  | { type: "warm"; warm: number }
  | { type: "stats"; stats: number; value: SandboxHostStats };
