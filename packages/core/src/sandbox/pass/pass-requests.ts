import { randomBytes } from "node:crypto";
import { errorMessage } from "../../error-message.js";
import { normalizeCode } from "../code/normalize-code.js";
import { denialDelivery, type HostReply, type PassRequest } from "../executor.js";
import { keyedByteStream } from "../prelude/keyed-random.js";
import { DELIVER_DENIED, DELIVER_ERROR, DELIVER_VALUE, TIMER_SERVICE } from "../prelude/sandbox-setup.js";
import { valueCodec } from "../prelude/value-codec.js";
import { onNextTurn } from "./event-loop-turn.js";
import type { LogCollector } from "./log-collector.js";
import { parseRequest } from "./parse-request.js";

/**
 * The host's end of the bridge for one pass, whatever engine runs the sandbox (see
 * docs/decisions.md, "Sandbox bridge"): requests come in as text, are checked as hostile input
 * and handed to `onRequest` in issue order; replies are queued for the engine to deliver through
 * the sandbox's `deliver`. It tracks the host work in flight (R-RP-7), the pass-scoped timers,
 * and whether a reply halted the pass. An engine's bridge (isolated-vm/isolate-bridge.ts for isolated-vm,
 * quickjs/quickjs-bridge.ts) adds the callbacks and the delivery itself.
 */
export abstract class PassRequests {
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
    protected readonly request: PassRequest,
    protected readonly deadline: number,
    protected readonly logs: LogCollector,
  ) {}

  /**
   * How the started program's pass ends: the text it finished with, "halted" (a reply halted it,
   * or only requests waiting for a person are left, R-AP-8), or "dead" once `dead` resolves (the
   * engine's watchdog: the sandbox can run no more code).
   */
  ending(dead: Promise<void>): Promise<{ text: string } | "halted" | "dead"> {
    return Promise.race([
      this.finished.then((text) => ({ text })),
      this.halted.then(() => "halted" as const),
      this.stalled.then(() => "halted" as const),
      dead.then(() => "dead" as const),
    ]);
  }

  /** True once a reply halted the pass: later requests are ignored and nothing more is delivered. */
  get haltReplied(): boolean {
    return this.halts;
  }

  /** One request from the sandbox, checked as hostile input, handed to `onRequest` in issue order. */
  protected submit(id: unknown, text: unknown, args: unknown): void {
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
    if (parsed.request.type === "service" && parsed.request.name === "run") replied = replied.then(snippetBody);
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

  /** The sandbox reported how the program ended (the `finish` callback). */
  protected finish(text: string): void {
    this.resolveFinished(text);
  }

  /** The program's first run returned: what it started is now counted to see whether it can go on. */
  programStarted(): void {
    this.started = true;
    this.checkStalled();
  }

  /**
   * Stalled: some request waits for a person, and nothing else is under way that could let the
   * program go on (a host reply, a delivery into the sandbox, a timer). A delivery settles only
   * after the microtasks it caused ran, and requests they issued are counted by then.
   */
  private checkStalled(): void {
    if (!this.started || this.ended || this.halts || this.waiting.size === 0) return;
    if (this.inFlight.size > 0 || this.deliveries.size > 0 || this.timers.size > 0) return;
    this.resolveStalled();
  }

  /** True while a delivery has not settled on this thread. */
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

  /** The pass has ended: nothing more is delivered, timers stop. */
  end(): void {
    this.ended = true;
    this.stopTimers();
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
    const text =
      reply.kind === "value"
        ? reply.value
        : reply.kind === "denied"
          ? denialDelivery(reply.message, reply.denial)
          : reply.message;
    // Delivered from the loop's next check phase, so that a burst of passes cannot keep the
    // loop from its timers (see event-loop-turn.ts). Counted from now: the pass waits for it.
    // Replies are delivered in the order they were given.
    const delivered = new Promise<void>((resolve) =>
      onNextTurn(() => resolve(this.canDeliver ? this.deliverNow(id, kind, text) : undefined)),
    );
    this.deliveries.add(delivered);
    void delivered.finally(() => {
      this.deliveries.delete(delivered);
      this.checkStalled();
    });
  }

  /** Whether a reply may still reach the sandbox: checked when it is given and again when it is delivered. */
  protected get canDeliver(): boolean {
    return !this.ended && !this.halts && this.sandboxReady;
  }

  /** Whether the engine's sandbox can take a delivery (its deliver function is known, it is alive). */
  protected abstract get sandboxReady(): boolean;

  /** Runs the sandbox's `deliver(id, kind, text)`; reports its own failures, never rejects. */
  protected abstract deliverNow(id: number, kind: number, text: string): Promise<void> | void;

  private stopTimers(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }
}

/**
 * `codemode.run`: the host answers with a snippet's source, read here, where the program runs
 * (R-SB-8: program text is never read on the runtime's event loop), into the body the sandbox
 * compiles, or `{ error }` when it does not parse (R-SN-2).
 */
function snippetBody(reply: HostReply): HostReply {
  if (reply.kind !== "value") return reply;
  let answer: unknown;
  try {
    answer = valueCodec.decode(reply.value);
  } catch {
    return reply;
  }
  if (answer === null || typeof answer !== "object") return reply;
  const { source, name } = answer as { source?: unknown; name?: unknown };
  if (typeof source !== "string") return reply;
  const normalized = normalizeCode(source);
  const body = normalized.ok
    ? { body: normalized.body }
    : {
        error: `snippet "${String(name)}" does not parse: ${normalized.message} (line ${normalized.line}, column ${normalized.column})`,
      };
  return { kind: "value", value: valueCodec.encode(body) ?? "" };
}

/**
 * The sandbox's `randomBytes(count)` as base64 text (at most 64 KiB per call): real randomness for
 * `deterministic: false`, the keyed stream of the execution's secret seed when `keyed`.
 */
export function randomBytesSource(deterministic: PassRequest["deterministic"]): (count: unknown) => string {
  // biome-ignore lint/complexity/useOptionalChain: `deterministic` may be `false`, which has no properties to chain.
  if (!deterministic || !deterministic.keyed) return (count) => randomBytes(byteCount(count)).toString("base64");
  const nextBytes = keyedByteStream(deterministic.seed);
  return (count) => nextBytes(byteCount(count)).toString("base64");
}

function byteCount(count: unknown): number {
  return typeof count === "number" && count > 0 && count <= 65_536 ? Math.floor(count) : 0;
}
