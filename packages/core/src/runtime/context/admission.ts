import { totalmem } from "node:os";
import { constrainedMemory } from "node:process";
import type { CancelRequest } from "../../log/execution-store.js";

/** What the runtime's passes are doing now: `runtime.load()` answers it; `codemode recover` shows it. */
export interface PassLoad {
  /** Passes running in a sandbox now. */
  passesInFlight: number;
  /** Passes waiting for a place, because `maxPassesInFlight` were running. */
  passesQueued: number;
  /** The limit in force (`maxPassesInFlight`). */
  maxPassesInFlight: number;
  /** How long the pass that has waited longest so far is waiting now, in ms; 0 when none waits. */
  oldestQueuedMs: number;
  /** Passes that had to wait since the runtime was created, and their time in the queue, in all. */
  queuedPassesTotal: number;
  queuedMsTotal: number;
  /**
   * The sandbox passes run in (R-SB-7): `isolated-vm` or `quickjs` for the runtime's own
   * executor (known from the start, before any pass), `custom` for an executor passed in.
   */
  sandbox: "isolated-vm" | "quickjs" | "custom";
  /**
   * Where passes run (R-SB-8, the `sandboxHost` option): `process` (sandbox processes), `thread`
   * (worker threads of this process) or `inline` (this thread) for the runtime's own executor,
   * `custom` for an executor passed in.
   */
  sandboxHost: "process" | "thread" | "inline" | "custom";
}

/** How a pass was let in: how long it waited and how many were ahead of it. */
export interface PassAdmission {
  queuedMs: number;
  /** Passes waiting ahead of this one when it asked (0: it started at once). */
  queueLength: number;
  /** Gives the place to the next pass. Idempotent. */
  release(): void;
}

/** Share of the machine's memory the default limit lets passes' heap limits add up to. */
const MEMORY_SHARE = 0.5;
const DEFAULT_FLOOR = 4;
const DEFAULT_CEILING = 256;

/**
 * The default `maxPassesInFlight`: as many passes as half the memory this process may use holds at
 * their heap limit (`memoryMb` each), between 4 and 256. A pass rarely fills its heap; the margin
 * is for the few that do, and for what V8 keeps beside the heap.
 */
export function defaultMaxPassesInFlight(memoryMb: number): number {
  const limit = constrainedMemory();
  const available = limit > 0 ? Math.min(limit, totalmem()) : totalmem();
  const fits = Math.floor((available * MEMORY_SHARE) / (memoryMb * 1024 * 1024));
  return Math.min(DEFAULT_CEILING, Math.max(DEFAULT_FLOOR, fits));
}

/**
 * Back-pressure for passes: at most `limit` run at once; the others wait their turn, first come
 * first served. A process given more work than it can hold slows down instead of aborting.
 */
export class PassGate {
  private inFlight = 0;
  private readonly waiting: Array<{ since: number; admit: () => void }> = [];
  private queuedPassesTotal = 0;
  private queuedMsTotal = 0;

  constructor(readonly limit: number) {}

  /** Resolves once the pass may start. */
  async admit(): Promise<PassAdmission> {
    const queueLength = this.waiting.length;
    if (this.inFlight < this.limit && queueLength === 0) {
      this.inFlight++;
      return { queuedMs: 0, queueLength: 0, release: this.releaser() };
    }
    const since = performance.now();
    // `release` hands the place over directly: `inFlight` stays counted for the waiter.
    await new Promise<void>((admit) => this.waiting.push({ since, admit }));
    const queuedMs = performance.now() - since;
    this.queuedPassesTotal++;
    this.queuedMsTotal += queuedMs;
    return { queuedMs, queueLength, release: this.releaser() };
  }

  load(): Omit<PassLoad, "sandbox" | "sandboxHost"> {
    const oldest = this.waiting[0];
    return {
      passesInFlight: this.inFlight,
      passesQueued: this.waiting.length,
      maxPassesInFlight: this.limit,
      oldestQueuedMs: oldest ? Math.round(performance.now() - oldest.since) : 0,
      queuedPassesTotal: this.queuedPassesTotal,
      queuedMsTotal: Math.round(this.queuedMsTotal),
    };
  }

  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      if (next) next.admit();
      else this.inFlight--;
    };
  }
}

/** A pass running in this runtime, as `runtime.cancel` reaches it without a store trip. */
export interface PassHere {
  cancel(request: CancelRequest): void;
}

/** The passes running in one runtime, by execution id: `runtime.cancel` stops them at once. */
export type PassesHere = Map<string, PassHere>;
