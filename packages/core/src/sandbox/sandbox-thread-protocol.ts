/**
 * Messages between the worker-thread executor (worker-thread-executor.ts) and the sandbox threads
 * it runs (sandbox-thread.ts). A pass crosses as its request without `onRequest`; each request the
 * sandbox makes crosses back to the thread that owns the pass's callbacks, and its reply forth.
 * Everything here is plain data, copied by the structured clone of `postMessage`.
 */
import type { HostReply, PassRequest, PassResult, SandboxRequest } from "./executor.js";
import type { IsolatedVmExecutorOptions } from "./isolated-vm-executor.js";
import type { QuickJsExecutorOptions } from "./quickjs/quickjs-executor.js";

/** A pass as it crosses to a sandbox thread: everything but the callbacks and the signal. */
export type PassData = Omit<PassRequest, "onRequest" | "signal" | "aborted" | "replay"> & {
  /** Its slot on the thread's abort board, when it got one (see `SandboxThreadData.abortBoard`). */
  abortSlot?: number;
  /** The preload as JSON text (sandbox-config.ts `replayText`): one string to copy, not an object per entry. */
  replayText?: string;
};

/** What a sandbox thread is started with (its `workerData`). */
export interface SandboxThreadData {
  /** Which sandbox the thread runs passes in. */
  engine: "isolated-vm" | "quickjs";
  options: IsolatedVmExecutorOptions & QuickJsExecutorOptions;
  /**
   * One Int32 per slot, set to 1 when the pass holding the slot is aborted: a QuickJS pass runs
   * on the thread itself, so while its program loops the thread reads no message, but its
   * interrupt handler reads the board.
   */
  abortBoard?: SharedArrayBuffer;
  /** The process's count of large programs being read (reading-gate.ts), shared by every thread. */
  readingGate?: SharedArrayBuffer;
}

/** From the executor to a sandbox thread. */
export type ToSandboxThread =
  | { type: "pass"; pass: number; request: PassData }
  /** The answer to request `request` (numbered by the thread). */
  | { type: "reply"; request: number; reply: HostReply }
  /** Pass `pass` was aborted (its run was cancelled): end it now. */
  | { type: "abort"; pass: number; reason: string }
  /** Resolve `warm` once the isolates prepared ahead are ready. */
  | { type: "warm"; warm: number }
  /** End every pass, dispose every isolate, then end the thread. */
  | { type: "close" };

/** From a sandbox thread to the executor. */
export type FromSandboxThread =
  | { type: "request"; pass: number; request: number; body: SandboxRequest }
  | { type: "result"; pass: number; result: PassResult }
  | { type: "warm"; warm: number };
