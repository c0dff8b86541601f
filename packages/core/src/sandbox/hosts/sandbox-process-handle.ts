import type { ChildProcess } from "node:child_process";
import { errorMessage } from "../../error-message.js";
import type { HostReply, PassRequest, PassResult } from "../executor.js";
import { abortReason } from "../pass/abort-reason.js";
import { CallLoopPoll } from "./call-loop-poll.js";
import { forkSandboxProcess } from "./fork-sandbox-process.js";
import { FramedPipe } from "./frame-channel.js";
import type { FromSandboxHost, PassData, SandboxHostData, SandboxHostStats, ToSandboxHost } from "./host-protocol.js";
import { memoryCapBytes, residentBytes } from "./process-memory.js";
import { answerAtExit, exitedBefore, type KillReason, type PassHere } from "./process-pass-end.js";

/** How long a pass that was aborted may take to end before its process is ended. */
export const ABORT_GRACE_MS = 250;
/**
 * How long a process may take to load its engine and say it is ready: on a runtime whose child
 * processes start but cannot speak over the channel, the wait must end (and the host fall back).
 */
const READY_WITHIN_MS = 20_000;
/** How long `stats()` waits for a process to answer before it reports what this side knows. */
const STATS_WITHIN_MS = 250;
/** Characters of a sandbox process's standard error kept, to say why it ended. */
const STDERR_TAIL_CHARS = 4_000;

/**
 * One child process that runs passes of its parent's executor (process-host.ts): it is started
 * with the engine's settings, takes passes and answers their requests over the IPC channel, and
 * is ended (SIGKILL) when a pass in it outlives its deadline by `graceMs`, does not stop when
 * aborted, or when the process holds more memory than its cap. However it ends, each pass it
 * ran answers as data (process-pass-end.ts).
 */
export class SandboxProcess {
  readonly child: ChildProcess;
  /** The pipe messages go over (frame-channel.ts); undefined where the IPC channel carries them (Bun, Deno). */
  private readonly pipe: FramedPipe | undefined;
  /** Resolves once the process has loaded its engine: undefined, or why it could not. */
  readonly ready: Promise<string | undefined>;
  /** Passes sent to this process in all (for recycling). */
  passesSent = 0;
  /** Takes no new pass: it ends once its passes have (recycled, or a process of a pass alone). */
  retiring = false;
  /** Set once the process has loaded its engine and takes passes. */
  isReady = false;
  /** Passes waiting for the process to be ready, to be sent to it then. */
  waitingPasses = 0;
  /** Its passes running now that started on its own thread (process-host.ts, `startInPlace`). */
  startedInPlace = 0;
  /** The sandboxes the process last said it had alive. */
  private sandboxesSeen = 0;
  exited = false;
  /** Set when the process ended while passes ran in it (crashed, or ended for a limit). */
  endedWithPasses = false;
  private readonly passes = new Map<number, PassHere>();
  private readonly waiting = new Map<number, (value: unknown) => void>();
  private nextPass = 0;
  private nextWait = 0;
  private killed: KillReason | undefined;
  private stderrTail = "";
  private resolveReady!: (problem: string | undefined) => void;
  private readonly exitListeners: Array<() => void> = [];
  /** Polls for the next call of a pass that calls in a loop (call-loop-poll.ts). */
  private readonly callLoop = new CallLoopPoll();
  private readonly idleListeners: Array<() => void> = [];

  constructor(
    data: SandboxHostData,
    private readonly settings: { graceMs: number; processMemoryMb: number | undefined },
    /** Whether this process was started for one pass alone. */
    readonly alone: boolean,
  ) {
    this.ready = new Promise((resolve) => {
      this.resolveReady = resolve;
    });
    const { child, frames } = forkSandboxProcess(data.engine !== "quickjs");
    this.child = child;
    this.pipe = frames
      ? new FramedPipe(
          frames,
          (message) => this.receive(message as FromSandboxHost),
          (error) => this.kill({ kind: "failed", message: errorMessage(error) }),
        )
      : undefined;
    this.child.stderr?.setEncoding("utf8");
    this.child.stderr?.on("data", (chunk: string) => {
      this.stderrTail = (this.stderrTail + chunk).slice(-STDERR_TAIL_CHARS);
    });
    if (!this.pipe) this.child.on("message", (message: FromSandboxHost) => this.receive(message));
    this.child.on("error", (error) => {
      // A message written to a process that has just died (it crashed): its exit follows and says
      // how it ended (a signal, an abort), which is what its passes are told, not "write EPIPE".
      const code = (error as NodeJS.ErrnoException).code;
      if (this.isReady && (code === "EPIPE" || code === "ERR_IPC_CHANNEL_CLOSED" || code === "ECONNRESET")) return;
      this.resolveReady(`the sandbox process could not be started: ${errorMessage(error)}`);
      this.kill({ kind: "failed", message: errorMessage(error) });
    });
    this.child.on("exit", (code, signal) => this.onExit(code, signal));
    // Until it is ready, a starting process keeps this one alive: a pass is waiting for it.
    const notReady = setTimeout(
      () => this.kill({ kind: "failed", message: `it was not ready within ${READY_WITHIN_MS} ms` }),
      READY_WITHIN_MS,
    );
    void this.ready.then(() => {
      clearTimeout(notReady);
      this.unrefWhenIdle();
    });
    this.post({ type: "start", data });
  }

  /** Passes running in the process, and those waiting for it to be ready. */
  get passCount(): number {
    return this.passes.size + this.waitingPasses;
  }

  /** Sends a pass; resolves with its result, however the process ends. */
  runPass(request: PassRequest, given: PassData, timeoutMs: number): Promise<PassResult> {
    const { onRequest, signal } = request;
    // The process counts the pass's time from now, when it is sent (not while it waited for a
    // process to start), as this side does: both see the same deadline.
    const data: PassData = { ...given, startedAt: given.startedAt ?? Date.now() };
    request.started?.(data.startedAt as number);
    const pass = this.nextPass++;
    this.passesSent++;
    return new Promise<PassResult>((resolve) => {
      const deadline = (data.startedAt as number) + timeoutMs;
      const overdue = this.overdueTimer(deadline);
      const abort = () => {
        this.post({ type: "abort", pass, reason: abortReason(signal) });
        const here = this.passes.get(pass);
        if (!here || here.abortTimer) return;
        here.abortTimer = setTimeout(() => {
          if (this.passes.has(pass)) this.kill({ kind: "abort", pass, message: abortReason(signal) });
        }, ABORT_GRACE_MS);
        here.abortTimer.unref();
      };
      signal?.addEventListener("abort", abort, { once: true });
      this.passes.set(pass, {
        onRequest,
        inFlight: new Set(),
        resolve,
        deadline,
        timeoutMs,
        memoryMb: data.memoryMb ?? 0,
        lastSeq: undefined,
        overdue,
        abortTimer: undefined,
        unlisten: () => signal?.removeEventListener("abort", abort),
      });
      this.refWhileBusy();
      if (this.exited) {
        this.onExit(null, null);
        return;
      }
      this.post({ type: "pass", pass, request: data });
      if (signal?.aborted) abort();
    });
  }

  /** Resolves once the process has its warm sandboxes ready (or has ended). */
  async warm(): Promise<void> {
    await this.ask((wait) => ({ type: "warm", warm: wait }));
  }

  /** A pass of `code` is about to come here (`Executor.anticipate`): the process reads it now. */
  expect(code: string): void {
    this.post({ type: "expect", code });
  }

  /**
   * The process's own counts and resident memory; undefined once it has ended. A process whose
   * thread a program holds (QuickJS runs on it) answers nothing until the program stops: after
   * `STATS_WITHIN_MS` the counts are this side's (passes sent and not answered, the sandboxes it
   * last reported).
   */
  async stats(): Promise<(SandboxHostStats & { rssBytes: number | undefined }) | undefined> {
    if (this.exited) return undefined;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<"late">((resolve) => {
      timer = setTimeout(() => resolve("late"), STATS_WITHIN_MS);
    });
    const answered = await Promise.race([this.ask((wait) => ({ type: "stats", stats: wait })), late]);
    clearTimeout(timer);
    if (answered === "late")
      return {
        passesRunning: this.passes.size,
        sandboxesLive: this.sandboxesSeen,
        rssBytes: residentBytes(this.child.pid),
      };
    const value = answered as SandboxHostStats | undefined;
    if (!value) return undefined;
    this.sandboxesSeen = value.sandboxesLive;
    return { ...value, rssBytes: residentBytes(this.child.pid) };
  }

  /** Ends the process when it holds more memory than its cap allows; true when it did. */
  checkMemory(): boolean {
    if (this.exited || this.killed || this.passes.size === 0) return false;
    const rssBytes = residentBytes(this.child.pid);
    if (rssBytes === undefined) return false;
    const capBytes = memoryCapBytes(
      this.settings.processMemoryMb,
      [...this.passes.values()].map((pass) => pass.memoryMb),
    );
    if (rssBytes <= capBytes) return false;
    const only = this.passes.size === 1 ? [...this.passes.keys()][0] : undefined;
    this.kill({ kind: "memory", pass: only, rssBytes, capBytes });
    return true;
  }

  /** Takes no new pass: the process keeps nothing warm, and ends (`close`) once its passes have. */
  retire(): void {
    this.retiring = true;
    this.post({ type: "retire" });
  }

  /** Asks the process to end its passes and itself; ends it after `graceMs` if it has not. */
  async close(graceMs: number): Promise<void> {
    if (this.exited) return;
    const exited = new Promise<void>((resolve) => this.exitListeners.push(resolve));
    this.child.ref();
    if (this.passes.size > 0) this.kill({ kind: "closed" });
    else {
      // A pass sent after this (it waited for the process to be ready) ends as closed, not as a crash.
      this.killed ??= { kind: "closed" };
      this.post({ type: "close" });
    }
    const timer = setTimeout(() => this.kill({ kind: "closed" }), graceMs);
    await exited;
    clearTimeout(timer);
  }

  /** Resolves once no pass runs in the process (or it has ended). */
  whenIdle(): Promise<void> {
    return this.passes.size === 0 || this.exited
      ? Promise.resolve()
      : new Promise((resolve) => this.idleListeners.push(resolve));
  }

  /** Resolves once the process has ended. */
  whenExited(): Promise<void> {
    return this.exited ? Promise.resolve() : new Promise((resolve) => this.exitListeners.push(resolve));
  }

  /** Ends the process now (SIGKILL), saying why, for the passes it runs. The first reason stays. */
  kill(reason: KillReason): void {
    if (this.exited) return;
    this.killed ??= reason;
    this.child.kill("SIGKILL");
  }

  private receive(message: FromSandboxHost): void {
    this.callLoop.message(message.type);
    switch (message.type) {
      case "ready":
        this.isReady = true;
        this.resolveReady(undefined);
        return;
      case "unusable":
        this.resolveReady(message.message);
        return;
      case "request":
        this.answer(message.pass, message.request, message.body);
        return;
      case "result":
        this.settle(message.pass, message.result);
        return;
      case "warm":
        this.waiting.get(message.warm)?.(true);
        this.waiting.delete(message.warm);
        return;
      case "stats":
        this.waiting.get(message.stats)?.(message.value);
        this.waiting.delete(message.stats);
        return;
    }
  }

  private answer(passNumber: number, request: number, body: Parameters<PassRequest["onRequest"]>[0]): void {
    const pass = this.passes.get(passNumber);
    // A process being ended gets no more answers: none of its requests starts anything here.
    if (!pass || this.killed) return;
    if ((body.type === "call" || body.type === "step") && body.seq > (pass.lastSeq ?? -1)) pass.lastSeq = body.seq;
    let reply: Promise<HostReply>;
    try {
      reply = pass.onRequest(body);
    } catch (error) {
      reply = Promise.reject(error);
    }
    const answered = reply
      .catch((error: unknown): HostReply => ({ kind: "error", message: errorMessage(error) }))
      .then((answer) => {
        this.post({ type: "reply", request, reply: answer });
        this.callLoop.answered(this.passes.size === 1, () => !this.exited && this.killed === undefined);
      });
    pass.inFlight.add(answered);
    void answered.finally(() => pass.inFlight.delete(answered));
  }

  private settle(passNumber: number, result: PassResult): void {
    const pass = this.passes.get(passNumber);
    if (!pass) return;
    this.passes.delete(passNumber);
    clearTimeout(pass.overdue);
    clearTimeout(pass.abortTimer);
    pass.unlisten();
    this.unrefWhenIdle();
    pass.resolve(result);
    if (this.passes.size === 0) for (const listener of this.idleListeners.splice(0)) listener();
  }

  /** A timer that ends the process if a pass is still running `graceMs` past `deadline`. */
  private overdueTimer(deadline: number): NodeJS.Timeout {
    const overdue = setTimeout(() => this.endOverdue(), Math.max(0, deadline - Date.now()) + this.settings.graceMs);
    overdue.unref();
    return overdue;
  }

  /** Ends the process for the passes that outlived their deadline by the grace (each ends TIMEOUT). */
  private endOverdue(): void {
    const now = Date.now();
    const overdue = [...this.passes].filter(([, pass]) => now >= pass.deadline).map(([number]) => number);
    if (overdue.length > 0) this.kill({ kind: "deadline", passes: new Set(overdue) });
  }

  private onExit(code: number | null, signal: NodeJS.Signals | null): void {
    this.exited = true;
    const ended =
      this.killed?.kind === "failed"
        ? `the sandbox process failed: ${this.killed.message}`
        : "the sandbox process was ended";
    this.resolveReady(this.killed ? ended : exitedBefore(code, signal, this.stderrTail));
    const passes = [...this.passes];
    this.passes.clear();
    this.endedWithPasses = passes.length > 0;
    const shared = passes.length > 1;
    for (const [number, pass] of passes) {
      clearTimeout(pass.overdue);
      clearTimeout(pass.abortTimer);
      pass.unlisten();
      answerAtExit(pass, {
        pass: number,
        killed: this.killed,
        shared,
        alone: this.alone,
        exit: { code, signal },
        lastSeq: pass.lastSeq,
        timeoutMs: pass.timeoutMs,
        stderrTail: this.stderrTail,
      });
    }
    for (const resolve of this.waiting.values()) resolve(undefined);
    this.waiting.clear();
    for (const listener of [...this.exitListeners.splice(0), ...this.idleListeners.splice(0)]) listener();
  }

  private ask(message: (wait: number) => ToSandboxHost): Promise<unknown> {
    if (this.exited) return Promise.resolve(undefined);
    const wait = this.nextWait++;
    return new Promise((resolve) => {
      this.waiting.set(wait, resolve);
      this.child.ref();
      this.post(message(wait));
    }).finally(() => this.unrefWhenIdle());
  }

  /** Sends to a process that may have ended meanwhile: its passes answer through `onExit` then. */
  private post(message: ToSandboxHost): void {
    if (this.exited || !this.child.connected) return;
    try {
      if (this.pipe) this.pipe.send(message);
      else this.child.send(message);
    } catch {
      // The channel closed: the exit follows.
    }
  }

  /** A running pass keeps the parent alive, as an isolate of the in-process executor does. */
  private refWhileBusy(): void {
    this.child.ref();
    // Bun's and Deno's IPC channels have no ref() or unref(): the child's own ref holds there.
    (this.child.channel as { ref?: () => void } | null | undefined)?.ref?.();
    this.pipe?.ref();
  }

  private unrefWhenIdle(): void {
    if (this.passes.size > 0 || this.waiting.size > 0) return;
    this.child.unref();
    (this.child.channel as { unref?: () => void } | null | undefined)?.unref?.();
    (this.child.stderr as { unref?: () => void } | null)?.unref?.();
    this.pipe?.unref();
  }
}
