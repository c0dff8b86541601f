import { Worker } from "node:worker_threads";
import { errorMessage } from "../../error-message.js";
import type { Executor, HostReply, PassRequest, PassResult } from "../executor.js";
import type { IsolatedVmExecutorOptions } from "../isolated-vm/isolated-vm-executor.js";
import { abortReason } from "../pass/abort-reason.js";
import { LARGE_PROGRAM_CHARS, readingGateBuffer } from "../pass/reading-gate.js";
import type { QuickJsExecutorOptions } from "../quickjs/quickjs-executor.js";
import { DEFAULT_TIMEOUT_MS } from "../sandbox-config.js";
import { hostEntry } from "./host-entry.js";
import {
  type FromSandboxHost,
  type PassData,
  passData,
  readsAhead,
  type SandboxHostData,
  type ToSandboxHost,
} from "./host-protocol.js";

export interface WorkerThreadExecutorOptions extends IsolatedVmExecutorOptions, QuickJsExecutorOptions {
  /**
   * The sandbox each thread runs passes in: "isolated-vm" (default), or "quickjs", whose programs
   * run on the thread itself, so a program that loops holds its thread, not the runtime's.
   */
  engine?: "isolated-vm" | "quickjs";
  /** Worker threads that run passes; each pass goes to the one with the fewest running. Default 2. */
  threads?: number;
  /** Isolates each thread keeps ready ahead of need (see `IsolatedVmExecutorOptions.prewarm`). Default 0. */
  prewarm?: number;
}

/** The worker-thread executor; `warm()` starts the threads and resolves once their prewarmed isolates are ready. */
export interface WorkerThreadExecutor extends Executor {
  warm(): Promise<void>;
}

const DEFAULT_THREADS = 2;
/** Passes of one QuickJS thread that can be stopped while its program loops; later ones by message only. */
const ABORT_SLOTS = 1_024;
const MAX_THREADS = 64;
/**
 * How long past its deadline a pass may go unanswered before its thread counts as stuck and is
 * ended (the thread's own watchdog ends a pass at the deadline; this only catches a thread that
 * stopped answering).
 */
const STUCK_GRACE_MS = 10_000;
/** How long `close()` waits for a thread to end its passes and dispose its isolates before ending it. */
const CLOSE_GRACE_MS = 2_000;

/**
 * Runs each pass in a fresh isolated-vm isolate, as `createIsolatedVmExecutor` does, but on one
 * of `threads` worker threads: creating and disposing isolates (over a millisecond per pass, and
 * synchronous) no longer costs the thread that runs the runtime, so many executions in flight
 * use the machine's cores. Each request the program makes crosses back to this thread, where the
 * runtime answers it: a host call costs a thread hop more than in the default executor (see
 * docs/performance.md). Idle threads never keep the process alive.
 *
 * @example
 * const runtime = createCodemodeRuntime({ connectors: [shop], sandboxThreads: 2 });
 * // or, with options of its own:
 * const runtime = createCodemodeRuntime({ connectors: [shop], executor: createWorkerThreadExecutor({ threads: 2, timeoutMs: 5_000 }) });
 */
export function createWorkerThreadExecutor(options: WorkerThreadExecutorOptions = {}): WorkerThreadExecutor {
  const { threads: threadCount = DEFAULT_THREADS, engine = "isolated-vm", ...sandboxOptions } = options;
  if (!Number.isInteger(threadCount) || threadCount < 1 || threadCount > MAX_THREADS) {
    throw new TypeError(`createWorkerThreadExecutor: threads must be a whole number from 1 to ${MAX_THREADS}`);
  }
  const threads = Array.from(
    { length: threadCount },
    () =>
      new SandboxThread({
        engine,
        options: sandboxOptions,
        readingGate: readingGateBuffer(),
        ...(engine === "quickjs" ? { abortBoard: new SharedArrayBuffer(ABORT_SLOTS * 4) } : {}),
      }),
  );
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  // Large programs all go to the first thread: the garbage of reading them stays in one heap
  // (each thread has its own), and they take turns anyway (reading-gate.ts).
  const threadFor = (code: string) =>
    code.length > LARGE_PROGRAM_CHARS
      ? threads[0]!
      : threads.reduce((least, candidate) => (candidate.passCount < least.passCount ? candidate : least));
  return {
    runPass(request) {
      return threadFor(request.code).runPass(request, request.timeoutMs ?? timeoutMs);
    },
    anticipate(code) {
      // Where the pass will go, if no other pass comes first.
      if (readsAhead(code)) threadFor(code).expect(code);
    },
    warm: async () => {
      await Promise.all(threads.map((thread) => thread.warm()));
    },
    async close() {
      await Promise.all(threads.map((thread) => thread.close()));
    },
  };
}

interface PassInFlight {
  onRequest: PassRequest["onRequest"];
  /** Stops listening to the pass's signal. */
  unlisten: () => void;
  /** Its slot on the abort board, when it got one. */
  slot: number | undefined;
  resolve: (result: PassResult) => void;
  stuckTimer: NodeJS.Timeout;
}

/** One worker thread and the passes it runs; the thread starts on first use and again after it ended. */
class SandboxThread {
  private worker: Worker | undefined;
  private readonly passes = new Map<number, PassInFlight>();
  private readonly warming = new Map<number, () => void>();
  private nextPass = 0;
  private nextWarm = 0;
  /** The abort board's slots not held by a pass (see `SandboxHostData.abortBoard`). */
  private readonly freeSlots: number[] = [];
  private readonly board: Int32Array | undefined;

  constructor(private readonly data: SandboxHostData) {
    if (data.abortBoard) {
      this.board = new Int32Array(data.abortBoard);
      for (let slot = this.board.length - 1; slot >= 0; slot--) this.freeSlots.push(slot);
    }
  }

  get passCount(): number {
    return this.passes.size;
  }

  runPass(request: PassRequest, timeoutMs: number): Promise<PassResult> {
    // The signal stays here (it cannot cross a thread): an abort crosses as a message, and on the
    // abort board, which a thread whose program loops still reads.
    const { onRequest, signal, started } = request;
    const slot = this.freeSlots.pop();
    // The thread counts the pass's time from now, as this side does: both see the same deadline.
    const startedAt = request.startedAt ?? Date.now();
    started?.(startedAt);
    const data: PassData = { ...passData(request), startedAt, ...(slot === undefined ? {} : { abortSlot: slot }) };
    let worker: Worker;
    try {
      worker = this.started();
    } catch (error) {
      if (slot !== undefined) this.freeSlots.push(slot);
      return Promise.resolve(sandboxError(`the sandbox thread could not be started: ${errorMessage(error)}`));
    }
    const pass = this.nextPass++;
    return new Promise<PassResult>((resolve) => {
      const stuckTimer = setTimeout(
        () =>
          this.end(worker, `the sandbox thread did not answer within ${timeoutMs + STUCK_GRACE_MS} ms; it was ended`),
        timeoutMs + STUCK_GRACE_MS,
      );
      stuckTimer.unref();
      const abort = () => {
        if (slot !== undefined && this.board) Atomics.store(this.board, slot, 1);
        this.postQuietly(worker, { type: "abort", pass, reason: abortReason(signal) });
      };
      signal?.addEventListener("abort", abort, { once: true });
      const unlisten = () => signal?.removeEventListener("abort", abort);
      this.passes.set(pass, { onRequest, unlisten, slot, resolve, stuckTimer });
      // A running pass keeps the process alive, as the isolate of the default executor does.
      if (this.passes.size === 1) worker.ref();
      try {
        this.post(worker, { type: "pass", pass, request: data });
        if (signal?.aborted) abort();
      } catch (error) {
        this.settle(pass, sandboxError(`the pass could not be sent to its sandbox thread: ${errorMessage(error)}`));
      }
    });
  }

  /** A pass of `code` is about to come (Executor.anticipate): a started thread with no pass reads it now. */
  expect(code: string): void {
    if (this.worker && this.passes.size === 0) this.postQuietly(this.worker, { type: "expect", code });
  }

  async warm(): Promise<void> {
    const worker = this.started();
    const warm = this.nextWarm++;
    await new Promise<void>((resolve) => {
      this.warming.set(warm, resolve);
      worker.ref();
      this.post(worker, { type: "warm", warm });
    });
  }

  /**
   * Ends the passes running (each answers with its failure) and the thread: the thread disposes
   * its isolates itself and ends. Only a thread that has not ended within CLOSE_GRACE_MS is
   * terminated from here (isolated-vm cannot always tear a thread down while one of its isolates
   * is inside a call into it), and one that still has not ended is left behind, never awaited.
   */
  async close(): Promise<void> {
    const worker = this.worker;
    if (!worker) return;
    const exited = new Promise<true>((resolve) => worker.once("exit", () => resolve(true)));
    // Whoever awaits close() must see it end: the thread keeps the process alive until it has.
    worker.ref();
    // A QuickJS pass whose program loops reads no message: the board stops it at once.
    if (this.board)
      for (const pass of this.passes.values()) if (pass.slot !== undefined) Atomics.store(this.board, pass.slot, 1);
    this.post(worker, { type: "close" });
    if (await within(exited, CLOSE_GRACE_MS)) return;
    void worker.terminate();
    if (await within(exited, CLOSE_GRACE_MS)) return;
    worker.unref();
    this.end(worker, "the sandbox thread did not end when the executor was closed");
  }

  private started(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(hostEntry("hosts/sandbox-thread.js"), {
      workerData: this.data,
      name: "codemode-sandbox",
    });
    worker.unref();
    worker.on("message", (message: FromSandboxHost) => this.receive(worker, message));
    worker.on("error", (error) => this.end(worker, `the sandbox thread failed: ${errorMessage(error)}`));
    worker.on("exit", (code) =>
      this.end(
        worker,
        code === 0 ? "the executor was closed while the pass ran" : `the sandbox thread ended (exit code ${code})`,
      ),
    );
    this.worker = worker;
    return worker;
  }

  private receive(worker: Worker, message: FromSandboxHost): void {
    if (message.type === "result") {
      this.settle(message.pass, message.result);
    } else if (message.type === "warm") {
      this.warming.get(message.warm)?.();
      this.warming.delete(message.warm);
      this.unrefWhenIdle(worker);
    } else if (message.type === "request") {
      const pass = this.passes.get(message.pass);
      if (!pass) return;
      // Called at once, in the order the sandbox issued its requests (the executor contract).
      let reply: Promise<HostReply>;
      try {
        reply = pass.onRequest(message.body);
      } catch (error) {
        reply = Promise.reject(error);
      }
      void reply
        .catch((error: unknown): HostReply => ({ kind: "error", message: errorMessage(error) }))
        .then((answer) => {
          if (this.worker === worker) this.post(worker, { type: "reply", request: message.request, reply: answer });
        });
    }
  }

  private settle(pass: number, result: PassResult): void {
    const inFlight = this.passes.get(pass);
    if (!inFlight) return;
    this.passes.delete(pass);
    clearTimeout(inFlight.stuckTimer);
    inFlight.unlisten();
    if (inFlight.slot !== undefined && this.board) {
      Atomics.store(this.board, inFlight.slot, 0);
      this.freeSlots.push(inFlight.slot);
    }
    if (this.worker) this.unrefWhenIdle(this.worker);
    inFlight.resolve(result);
  }

  private unrefWhenIdle(worker: Worker): void {
    if (this.passes.size === 0 && this.warming.size === 0) worker.unref();
  }

  /** The thread is gone (or is made to go): every pass on it fails, and the next pass starts a new one. */
  private end(worker: Worker, reason: string): void {
    if (this.worker !== worker) return;
    this.worker = undefined;
    void worker.terminate();
    for (const pass of [...this.passes.keys()]) this.settle(pass, sandboxError(reason));
    for (const resolve of this.warming.values()) resolve();
    this.warming.clear();
  }

  /** Posts to a thread that may have ended meanwhile: its passes answer through `end` then. */
  private postQuietly(worker: Worker, message: ToSandboxHost): void {
    try {
      worker.postMessage(message);
    } catch {
      // The thread is gone; `end` answers its passes.
    }
  }

  private post(worker: Worker, message: ToSandboxHost): void {
    worker.postMessage(message);
  }
}

/** Whether `settled` resolved within `ms`. */
async function within(settled: Promise<true>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([settled, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** How a pass ends when its thread could not run it to the end (no logs reach this thread then). */
function sandboxError(error: string): PassResult {
  return { status: "failed", code: "SANDBOX_ERROR", error, logs: [] };
}
