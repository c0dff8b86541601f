import { randomUUID } from "node:crypto";
import { EventEmitter } from "node:events";
import type { ErrorCode } from "@codemode/core";
import { errorMessage } from "@codemode/core/adapters";
import { QueueEvents, QueueEventsProducer } from "bullmq";
import type { OpenedConnection } from "./connection.js";
import { type CodemodeJobResult, executionIdOfJob, type PendingCall } from "./jobs.js";

/**
 * What happens to runs, published to every process that holds a queue of the fleet, so an
 * approval inbox or a chat server reacts without polling. Delivery is at least once: a job that
 * ran again after its worker died can announce the same state twice; key on `executionId` (and
 * `seq` for pauses).
 */
export interface CodemodeEventMap {
  /** A pass paused at a call that needs approval. Its arguments: `runtime.pending(executionId)`. */
  paused: { executionId: string; pending: PendingCall[] };
  /** The run completed; its result: `runtime.outcome(executionId)`. */
  completed: { executionId: string };
  /** The run ended with an error of the program (or a refusal such as NOT_FOUND). */
  error: { executionId: string; code: ErrorCode; error: string };
  /** A person rejected the pending call through `queue.reject`; the run ended `rejected`. */
  rejected: { executionId: string; seq: number; by?: string };
  /** A worker died or stalled while holding this run's job: the job runs again on another worker. */
  stalled: { executionId: string; jobId: string };
  /**
   * The job gave up (its retries ran out while the store failed, the run stayed held, or workers
   * lacked a connector). The run is left as it was: after a `run_` job usually `running`, for
   * `queue.requeue(executionId)`; after an `approve_` job usually still `paused` at that call, for
   * `queue.approve` again (which puts the job back) or `expirePaused`.
   */
  failed: { executionId: string; jobId: string; reason: string };
}

export type CodemodeEventName = keyof CodemodeEventMap;

/** A typed listener registry (`queue.events.on("paused", ...)`). */
export interface CodemodeEvents {
  on<K extends CodemodeEventName>(type: K, listener: (event: CodemodeEventMap[K]) => void): this;
  once<K extends CodemodeEventName>(type: K, listener: (event: CodemodeEventMap[K]) => void): this;
  off<K extends CodemodeEventName>(type: K, listener: (event: CodemodeEventMap[K]) => void): this;
}

/** Custom events on BullMQ's event stream; names of BullMQ's own events are reserved. */
const REJECTED_EVENT = "codemode-rejected";
const LIVE_EVENT = "codemode-live";
/** Stream length kept when we publish (BullMQ's own default is about 10,000). */
const MAX_EVENTS = 10_000;

/**
 * One `QueueEvents` reader per queue object, turned into `CodemodeEvents`, plus a per-execution
 * wake-up for `waitForOutcome`. `live` settles once the reader is known to be reading: BullMQ's
 * reader starts at "events from now on" only when its first read reaches the store, so we
 * publish a marker and wait to read it back; from then on nothing published is missed.
 */
export class LifecycleEvents {
  readonly public: CodemodeEvents;
  readonly live: Promise<void>;
  private readonly emitter = new EventEmitter();
  private readonly executions = new EventEmitter();
  private readonly reader: QueueEvents<unknown, never, never>;
  private readonly producer: QueueEventsProducer<never, never>;
  private closed = false;

  constructor(name: string, opened: OpenedConnection, warn: (message: string) => void) {
    this.executions.setMaxListeners(0);
    this.emitter.setMaxListeners(0);
    // PostgreSQL's reader waits on LISTEN/NOTIFY between reads; a short block bounds the delay
    // when a notification slips past it. Redis blocks on the stream and wakes at once.
    const blockingTimeout = opened.kind === "postgres" ? 1_000 : 10_000;
    this.reader = new QueueEvents(name, { ...opened.options, blockingTimeout } as never, opened.backend as never);
    this.producer = new QueueEventsProducer(name, opened.options as never, opened.backend as never);
    this.reader.on("error", (error: Error) => warn(`queue events of "${name}": ${error.message}`));
    this.producer.on("error", (error: Error) => warn(`queue events producer of "${name}": ${error.message}`));
    this.listen();
    this.live = this.goLive(warn);
    this.live.catch(() => undefined);
    this.public = this.emitter as unknown as CodemodeEvents;
  }

  /** Calls `listener` whenever something happens to `executionId`; returns the unsubscribe. */
  watch(executionId: string, listener: () => void): () => void {
    this.executions.on(executionId, listener);
    return () => this.executions.off(executionId, listener);
  }

  async publishRejected(executionId: string, seq: number, by?: string): Promise<void> {
    await this.producer.publishEvent(
      { eventName: REJECTED_EVENT, executionId, seq: String(seq), ...(by !== undefined ? { by } : {}) },
      MAX_EVENTS,
    );
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.allSettled([this.reader.close(), this.producer.close()]);
  }

  private listen(): void {
    this.reader.on("completed", ({ jobId, returnvalue }: { jobId: string; returnvalue: unknown }) => {
      const result = returnvalue as CodemodeJobResult | undefined;
      const executionId = executionIdOfJob(jobId);
      if (!executionId || typeof result !== "object" || result === null) return;
      if (result.status === "paused")
        this.emit("paused", { executionId, pending: Array.isArray(result.pending) ? result.pending : [] });
      else if (result.status === "completed") this.emit("completed", { executionId });
      else if (result.status === "error")
        this.emit("error", { executionId, code: result.code, error: String(result.error) });
    });
    this.reader.on("failed", ({ jobId, failedReason }: { jobId: string; failedReason: string }) => {
      const executionId = executionIdOfJob(jobId);
      if (executionId) this.emit("failed", { executionId, jobId, reason: failedReason });
    });
    this.reader.on("stalled", ({ jobId }: { jobId: string }) => {
      const executionId = executionIdOfJob(jobId);
      if (executionId) this.emit("stalled", { executionId, jobId });
    });
    this.reader.on(REJECTED_EVENT as "completed", (args: unknown) => {
      const { executionId, seq, by } = args as { executionId?: unknown; seq?: unknown; by?: unknown };
      if (typeof executionId !== "string") return;
      this.emit("rejected", { executionId, seq: Number(seq), ...(typeof by === "string" ? { by } : {}) });
    });
  }

  private emit<K extends CodemodeEventName>(type: K, event: CodemodeEventMap[K]): void {
    // An EventEmitter throws an "error" event nobody listens to; ours is news, not a failure.
    if (type !== "error" || this.emitter.listenerCount("error") > 0) this.emitter.emit(type, event);
    this.executions.emit(event.executionId);
  }

  /** Publishes markers until the reader reads one back (retrying while the store is unreachable). */
  private async goLive(warn: (message: string) => void): Promise<void> {
    const nonce = randomUUID();
    let seen = false;
    const onMarker = (args: unknown) => {
      if ((args as { nonce?: unknown }).nonce === nonce) seen = true;
    };
    this.reader.on(LIVE_EVENT as "completed", onMarker);
    try {
      for (let attempt = 0; !seen; attempt++) {
        if (this.closed) throw new Error("the queue was closed before its events were live");
        try {
          await this.producer.publishEvent({ eventName: LIVE_EVENT, nonce }, MAX_EVENTS);
        } catch (error) {
          if (attempt % 20 === 19) warn(`queue events are not live yet: ${errorMessage(error)}`);
        }
        for (let waited = 0; waited < 200 && !seen && !this.closed; waited += 10)
          await new Promise((resolve) => setTimeout(resolve, 10));
      }
    } finally {
      this.reader.off(LIVE_EVENT as "completed", onMarker);
    }
  }
}
