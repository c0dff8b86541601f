/**
 * The sandbox side of a host that runs passes away from the runtime (a sandbox thread or a
 * sandbox process): it runs each pass it is sent with its own executor, sends the sandbox's
 * requests back and hands their replies in. Creating, setting up and disposing sandboxes, and
 * for QuickJS running the program itself, costs this thread, not the runtime's. See
 * host-protocol.ts for the messages.
 */
import { errorMessage } from "../../error-message.js";
import { type NormalizedCode, normalizeCode } from "../code/normalize-code.js";
import type { Executor, HostReply, PassResult } from "../executor.js";
import {
  type FromSandboxHost,
  type PassData,
  readsAhead,
  type SandboxHostData,
  type SandboxHostStats,
  type ToSandboxHost,
} from "./host-protocol.js";

/** An executor of either engine, as a host runs it. */
export interface HostedExecutor extends Executor {
  warm?(): Promise<void>;
  stats?(): { passesRunning: number; isolatesLive?: number; modulesLive?: number };
  retire?(): void;
}

/**
 * The host's executor, loaded for its engine only: a QuickJS host never loads isolated-vm.
 * `process`: whether the host is a process of its own, which may prepare warm isolates' next
 * contexts ahead (a thread must not be found inside an isolate's work when its process exits
 * right after a pass answered; a sandbox process that ends takes its isolates with it).
 */
export async function hostedExecutor(data: SandboxHostData, process = false): Promise<HostedExecutor> {
  if (data.engine === "quickjs") {
    const { createQuickJsExecutor } = await import("../quickjs/quickjs-executor.js");
    return createQuickJsExecutor(data.options);
  }
  const { createIsolatedVmExecutor } = await import("../isolated-vm/isolated-vm-executor.js");
  return createIsolatedVmExecutor({ ...data.options, prepareContextsAhead: process });
}

export interface PassServerOptions {
  /** Threads only: the abort board a looping QuickJS pass reads (see `SandboxHostData.abortBoard`). */
  abortBoard?: Int32Array;
  /**
   * Processes only: a pass running alone in the process owns its thread (`PassRequest.ownsThread`).
   * Not for threads: a thread blocked in a delivery reads no abort, while a process that does not
   * stop when aborted is ended from outside within half a second.
   */
  aloneOwnsThread?: boolean;
  /** Called once `close` has ended every pass and disposed every sandbox. */
  closed(): void;
}

/** Serves passes over a channel: call `receive` with each message from the executor. */
export class PassServer {
  /** Requests sent to the executor and not yet answered, by number. */
  private readonly awaitingReply = new Map<number, (reply: HostReply) => void>();
  private readonly passesRunning = new Set<Promise<void>>();
  /** The abort of each pass running here, by number. */
  private readonly aborts = new Map<number, AbortController>();
  private nextRequest = 0;
  /** The program a pass is expected for, read ahead of it, until the next pass comes. */
  private expected: { code: string; read: NormalizedCode } | undefined;
  private passesReadAhead = 0;

  constructor(
    private readonly executor: HostedExecutor,
    private readonly send: (message: FromSandboxHost) => void,
    private readonly options: PassServerOptions,
  ) {}

  /** Whether one pass runs here and waits for the answer to a request of its own (a process may spin for it). */
  get waitingAlone(): boolean {
    return this.aborts.size === 1 && this.awaitingReply.size > 0;
  }

  receive(message: ToSandboxHost): void {
    switch (message.type) {
      case "expect":
        // Sent to a host running no pass; the next pass takes it, whatever its program.
        this.expected = readsAhead(message.code)
          ? { code: message.code, read: normalizeCode(message.code) }
          : undefined;
        return;
      case "pass":
        this.runPass(message.pass, message.request);
        return;
      case "reply": {
        const answer = this.awaitingReply.get(message.request);
        this.awaitingReply.delete(message.request);
        answer?.(message.reply);
        return;
      }
      case "abort":
        this.aborts.get(message.pass)?.abort(message.reason);
        return;
      case "warm":
        void (this.executor.warm?.() ?? Promise.resolve()).then(() => this.send({ type: "warm", warm: message.warm }));
        return;
      case "stats":
        this.send({ type: "stats", stats: message.stats, value: this.stats() });
        return;
      case "retire":
        this.executor.retire?.();
        return;
      case "close":
        void this.close();
        return;
      case "start":
        // Handled by the process entry before a server exists.
        return;
    }
  }

  private stats(): SandboxHostStats {
    const counts = this.executor.stats?.();
    return {
      passesRunning: counts?.passesRunning ?? this.passesRunning.size,
      sandboxesLive: counts?.isolatesLive ?? counts?.modulesLive ?? 0,
      passesReadAhead: this.passesReadAhead,
    };
  }

  private runPass(pass: number, data: PassData): void {
    const abort = new AbortController();
    this.aborts.set(pass, abort);
    const { abortSlot, ...request } = data;
    const expected = this.expected;
    this.expected = undefined;
    const readAhead = expected?.code === request.code ? expected.read : undefined;
    if (readAhead) this.passesReadAhead++;
    const board = this.options.abortBoard;
    const slot = board && abortSlot !== undefined ? abortSlot : undefined;
    const ran = this.executor
      .runPass({
        ...request,
        ...(readAhead ? { readAhead } : {}),
        signal: abort.signal,
        ...(slot === undefined ? {} : { aborted: () => Atomics.load(board as Int32Array, slot) !== 0 }),
        ...(this.options.aloneOwnsThread ? { ownsThread: () => this.aborts.size === 1 } : {}),
        onRequest: (body) =>
          new Promise<HostReply>((resolve) => {
            const number = this.nextRequest++;
            this.awaitingReply.set(number, resolve);
            this.send({ type: "request", pass, request: number, body });
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
      .then((result) => this.send({ type: "result", pass, result }));
    this.passesRunning.add(ran);
    void ran.finally(() => {
      this.passesRunning.delete(ran);
      this.aborts.delete(pass);
    });
  }

  private async close(): Promise<void> {
    // Ends the passes still running (each answers with its failure), then disposes every isolate.
    // A pass also waits for the host calls it started: those the executor has not answered yet
    // end here, with an error nobody will see.
    await this.executor.close();
    for (const answer of this.awaitingReply.values()) answer({ kind: "error", message: "the executor was closed" });
    this.awaitingReply.clear();
    await Promise.allSettled([...this.passesRunning]);
    this.options.closed();
  }
}
