import { randomBytes } from "node:crypto";
import ivm from "isolated-vm";
import { errorMessage } from "../error-message.js";
import { onNextTurn } from "./event-loop-turn.js";
import type { HostReply, PassRequest } from "./executor.js";
import { keyedByteStream } from "./keyed-random.js";
import type { LogCollector } from "./log-collector.js";
import { parseRequest } from "./parse-request.js";
import type { PassWatchdog } from "./pass-watchdog.js";
import { DELIVER_DENIED, DELIVER_ERROR, DELIVER_VALUE, TIMER_SERVICE } from "./sandbox-setup.js";

/**
 * The host's end of the bridge for one pass (see docs/decisions.md, "Sandbox bridge"): requests
 * come in through `submitCallback` as text, are checked as hostile input and handed to
 * `onRequest` in issue order; replies go out through the sandbox's `deliver`. It tracks the host
 * work in flight (R-RP-7), the pass-scoped timers, and whether a reply halted the pass.
 */
export class PassBridge {
  /** The sandbox's deliver function, once setup has returned it. */
  deliver: ivm.Reference<(id: number, kind: number, text: string) => void> | undefined;
  ended = false;
  private halts = false;
  private readonly inFlight = new Set<Promise<void>>();
  private readonly timers = new Set<ReturnType<typeof setTimeout>>();
  private readonly deliveries = new Set<Promise<void>>();
  private resolveHalted!: () => void;
  /** Resolves when a host reply halts the pass (pause, divergence, limits). */
  readonly halted = new Promise<void>((resolve) => {
    this.resolveHalted = resolve;
  });
  /** Requests answered `wait` (R-AP-8): open for good in this pass, and not host work to wait for. */
  private readonly waiting = new Set<number>();
  /** Set once the program's first run returned: from then on, a bridge with nothing but waiting requests is stalled. */
  private started = false;
  private resolveStalled!: () => void;
  /** Resolves when the program can go no further: every open request waits for a person. */
  readonly stalled = new Promise<void>((resolve) => {
    this.resolveStalled = resolve;
  });
  private resolveFinished!: (text: string) => void;
  /** Resolves with the text `__codemode_start` reported when the program ended (see install-start.ts). */
  readonly finished = new Promise<string>((resolve) => {
    this.resolveFinished = resolve;
  });

  constructor(
    private readonly isolate: ivm.Isolate,
    private readonly request: PassRequest,
    private readonly deadline: number,
    private readonly logs: LogCollector,
    private readonly watchdog: PassWatchdog,
  ) {}

  /** True once a reply halted the pass: later requests are ignored and nothing more is delivered. */
  get haltReplied(): boolean {
    return this.halts;
  }

  /**
   * What the host callbacks reach, cut when the pass ends: isolated-vm releases a disposed
   * isolate's callbacks only the next time this thread runs isolated-vm work, and a host idle
   * after a burst of pauses would otherwise keep every pass's bridge (its request, and through
   * it the whole log) alive until then.
   */
  private readonly port: { bridge: PassBridge | undefined; nextBytes: ((count: number) => Buffer) | undefined } = {
    bridge: this,
    nextBytes: undefined,
  };

  submitCallback(): ivm.Callback {
    const port = this.port;
    return new ivm.Callback((id: unknown, text: unknown, args: unknown) => port.bridge?.submit(id, text, args));
  }

  /** One request from the sandbox, checked as hostile input, handed to `onRequest` in issue order. */
  private submit(id: unknown, text: unknown, args: unknown): void {
    if (this.ended || this.halts || typeof id !== "number" || typeof text !== "string") return;
    const parsed = parseRequest(text, args);
    if (!parsed.ok) {
      this.reply(id, { kind: "error", message: parsed.message });
      return;
    }
    if (parsed.request.type === "service" && parsed.request.name === TIMER_SERVICE) {
      this.startTimer(id, parsed.request.args);
      return;
    }
    let replied: Promise<HostReply>;
    try {
      replied = this.request.onRequest(parsed.request);
    } catch (error) {
      replied = Promise.resolve({ kind: "error", message: errorMessage(error) });
    }
    const settled = replied.then(
      (reply) => this.reply(id, reply),
      (error: unknown) => this.reply(id, { kind: "error", message: errorMessage(error) }),
    );
    this.inFlight.add(settled);
    void settled.finally(() => {
      this.inFlight.delete(settled);
      this.checkStalled();
    });
  }

  /** The program's first run returned: what it started is now counted to see whether it can go on. */
  programStarted(): void {
    this.started = true;
    this.checkStalled();
  }

  /**
   * Stalled: some request waits for a person, and nothing else is under way that could let the
   * program go on (a host reply, a delivery into the sandbox, a timer). A delivery's `apply`
   * settles only after the microtasks it caused ran, and requests they issued are counted by then.
   */
  private checkStalled(): void {
    if (!this.started || this.ended || this.halts || this.waiting.size === 0) return;
    if (this.inFlight.size > 0 || this.deliveries.size > 0 || this.timers.size > 0) return;
    this.resolveStalled();
  }

  /** How the program reports its end: a host callback, never a promise the host waits on (R-RT-5). */
  finishCallback(): ivm.Callback {
    const port = this.port;
    return new ivm.Callback((text: unknown) => {
      if (typeof text === "string") port.bridge?.resolveFinished(text);
    });
  }

  logCallback(): ivm.Callback {
    const port = this.port;
    return new ivm.Callback((level: unknown, text: unknown) => {
      if (typeof level === "string" && typeof text === "string") port.bridge?.logs.add(level, text);
    });
  }

  /**
   * Bytes for the sandbox's `crypto`, as base64 text (at most 64 KiB per call): real randomness
   * for `deterministic: false`, the keyed stream of the execution's secret seed when `keyed`.
   */
  randomBytesCallback(): ivm.Callback {
    const deterministic = this.request.deterministic;
    const port = this.port;
    // Like every callback of the pass, it stops answering when the pass ends.
    // biome-ignore lint/complexity/useOptionalChain: `deterministic` may be `false`, which has no properties to chain.
    if (!deterministic || !deterministic.keyed)
      return new ivm.Callback((count: unknown) => (port.bridge ? randomBase64(count) : ""));
    port.nextBytes = keyedByteStream(deterministic.seed);
    return new ivm.Callback((count: unknown) => port.nextBytes?.(byteCount(count)).toString("base64") ?? "");
  }

  /** True while a delivery's `apply` has not settled on this thread. */
  get deliveriesInFlight(): boolean {
    return this.deliveries.size > 0;
  }

  /** True when every delivery in flight settled within `ms`. */
  async deliveriesSettleWithin(ms: number): Promise<boolean> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const settled = await Promise.race([
      this.settleDeliveries().then(() => true),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(false), ms);
      }),
    ]);
    clearTimeout(timer);
    return settled;
  }

  /** Lets deliveries report how they ended: the program's own promise may say only "abandoned". */
  async settleDeliveries(): Promise<void> {
    await Promise.allSettled([...this.deliveries]);
  }

  /**
   * After the program settled or halted: stops the timers and waits for host work already started
   * (R-RP-7) until the deadline. True when some was still running at the deadline.
   */
  async waitForStartedCalls(): Promise<boolean> {
    this.stopTimers();
    const remaining = this.deadline - Date.now();
    if (this.inFlight.size === 0) return false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const expired = await Promise.race([
      Promise.allSettled([...this.inFlight]).then(() => false),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(true), Math.max(0, remaining));
      }),
    ]);
    clearTimeout(timer);
    return expired;
  }

  /** The pass has ended: nothing more is delivered, timers stop, the deliver reference is released. */
  end(): void {
    this.ended = true;
    this.port.bridge = undefined;
    this.port.nextBytes = undefined;
    this.stopTimers();
    this.deliver?.release();
  }

  private startTimer(id: number, argsText: string): void {
    const delay = Math.min(Math.max(0, Number(argsText) || 0), Math.max(0, this.deadline - Date.now()));
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      this.reply(id, { kind: "value", value: "" });
      this.checkStalled();
    }, delay);
    this.timers.add(timer);
  }

  private reply(id: number, reply: HostReply): void {
    if (reply.kind === "halt") {
      this.halts = true;
      this.resolveHalted();
      return;
    }
    if (reply.kind === "wait") {
      this.waiting.add(id);
      return;
    }
    if (!this.canDeliver) return;
    const kind = reply.kind === "value" ? DELIVER_VALUE : reply.kind === "denied" ? DELIVER_DENIED : DELIVER_ERROR;
    const text = reply.kind === "value" ? reply.value : reply.message;
    // Delivered from the loop's next check phase, so that a burst of passes cannot keep the
    // loop from its timers (see event-loop-turn.ts). Counted from now: the pass waits for it.
    const delivered = new Promise<void>((resolve) => onNextTurn(() => resolve(this.deliverNow(id, kind, text))));
    this.deliveries.add(delivered);
    void delivered.finally(() => {
      this.deliveries.delete(delivered);
      this.checkStalled();
    });
  }

  /** Whether a reply may still reach the sandbox: checked when it is given and again when it is delivered. */
  private get canDeliver(): boolean {
    return !this.ended && !this.halts && this.deliver !== undefined && !this.isolate.isDisposed;
  }

  private async deliverNow(id: number, kind: number, text: string): Promise<void> {
    if (!this.canDeliver) return;
    try {
      await this.deliver!.apply(undefined, [id, kind, text], { timeout: Math.max(1, this.deadline - Date.now()) });
    } catch (error) {
      this.watchdog.deliveryFailed(error);
    }
  }

  private stopTimers(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }
}

function randomBase64(count: unknown): string {
  return randomBytes(byteCount(count)).toString("base64");
}

function byteCount(count: unknown): number {
  return typeof count === "number" && count > 0 && count <= 65_536 ? Math.floor(count) : 0;
}
