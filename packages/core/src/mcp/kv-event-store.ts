import { randomBytes } from "node:crypto";
import type { EventId, EventStore, StreamId } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { type JSONRPCMessage, JSONRPCMessageSchema } from "@modelcontextprotocol/sdk/types.js";
import type { KeyvLike } from "../log/interface.js";

/** The part of a Keyv instance the event store uses. */
export type EventKeyv = Pick<KeyvLike, "get" | "set" | "delete" | "getMany">;

export interface KeyvEventStoreOptions {
  /** Events kept per stream; the oldest is deleted beyond it. Default 1000. */
  maxEventsPerStream?: number;
  /** How long stored events live (a Keyv TTL, refreshed by each new event of the stream). Default 1 hour. */
  ttlMs?: number;
  /** The first part of every key. Default "codemode:mcp-events". */
  prefix?: string;
}

/** Where one stream's last seq is, and what one event id points to. */
type EventPosition = { streamId: StreamId; seq: number };
type StoredEvent = { eventId: EventId; message: string };

/**
 * The Streamable HTTP transport's event store (resumability) over Keyv, for ONE session: the
 * transport names its standalone GET stream "_GET_stream" in every session and `replayEventsAfter`
 * is not told the session, so the session id is part of every key. Each stream keeps at most
 * `maxEventsPerStream` events and everything expires after `ttlMs`.
 *
 * Keys: `<prefix>:<sessionId>:e:<streamId>:<seq>` (an event), `<prefix>:<sessionId>:id:<eventId>`
 * (where an event id points), `<prefix>:<sessionId>:seq:<streamId>` (a stream's last seq).
 *
 * @example
 * const sessionId = randomUUID();
 * const transport = new StreamableHTTPServerTransport({
 *   sessionIdGenerator: () => sessionId,
 *   eventStore: new KeyvEventStore(new Keyv(), sessionId),
 * });
 */
export class KeyvEventStore implements EventStore {
  readonly #keyv: EventKeyv;
  readonly #base: string;
  readonly #maxEvents: number;
  readonly #ttlMs: number;
  /**
   * Each stream's last seq. A session lives in one process, so this instance numbers its events
   * (one round trip fewer per event, and no two concurrent stores can take the same seq).
   */
  readonly #streams = new Map<StreamId, number>();
  /** Writes run one at a time, so a stream's seq key never goes back below an event already stored. */
  #writes: Promise<void> = Promise.resolve();

  constructor(keyv: EventKeyv, sessionId: string, options: KeyvEventStoreOptions = {}) {
    const bounds = eventStoreBounds(options);
    this.#keyv = keyv;
    this.#base = `${options.prefix ?? "codemode:mcp-events"}:${sessionId}`;
    this.#maxEvents = bounds.maxEventsPerStream;
    this.#ttlMs = bounds.ttlMs;
  }

  /**
   * Stores one message sent on `streamId`. A storage failure does not fail the send: the message
   * still goes out live, under an id nothing points to, so resuming from it is refused.
   */
  async storeEvent(streamId: StreamId, message: JSONRPCMessage): Promise<EventId> {
    const seq = (this.#streams.get(streamId) ?? 0) + 1;
    this.#streams.set(streamId, seq);
    // Random bytes: an event id must not let one session guess its way into another's events.
    const eventId = `${seq}.${randomBytes(12).toString("base64url")}`;
    const write = this.#writes.then(() => this.#store(streamId, seq, eventId, message));
    // Resumability is best effort; delivery of the live stream is not.
    this.#writes = write.catch(() => undefined);
    await this.#writes;
    return eventId;
  }

  async getStreamIdForEventId(eventId: EventId): Promise<StreamId | undefined> {
    return (await this.#position(eventId))?.streamId;
  }

  /**
   * Sends the events of `lastEventId`'s stream stored after it, in order. An unknown (or evicted)
   * id replays nothing; the transport refuses it first through `getStreamIdForEventId`, so a gap
   * never looks like a complete replay. Stored values are read as untrusted: one that is not a
   * JSON-RPC message is skipped.
   */
  async replayEventsAfter(
    lastEventId: EventId,
    { send }: { send: (eventId: EventId, message: JSONRPCMessage) => Promise<void> },
  ): Promise<StreamId> {
    const from = await this.#position(lastEventId);
    if (!from) return "";
    const last = asSeq(await this.#keyv.get(this.#key("seq", from.streamId))) ?? from.seq;
    // Never more than one stream's bound, whatever the stored seqs say.
    const first = Math.max(from.seq + 1, last - this.#maxEvents + 1);
    const seqs = Array.from({ length: Math.max(0, last - first + 1) }, (_, index) => first + index);
    const events = await this.#getMany(seqs.map((seq) => this.#key("e", from.streamId, seq)));
    for (const stored of events) {
      const event = asEvent(stored);
      if (event) await send(event.eventId, event.message);
    }
    return from.streamId;
  }

  /** Deletes every event this instance stored: the session is gone, nobody can resume it. */
  async clear(): Promise<void> {
    await this.#writes;
    const keys: string[] = [];
    for (const [streamId, last] of this.#streams) {
      const first = Math.max(1, last - this.#maxEvents + 1);
      const eventKeys = Array.from({ length: last - first + 1 }, (_, index) => this.#key("e", streamId, first + index));
      for (const stored of await this.#getMany(eventKeys)) {
        const eventId = isRecord(stored) && typeof stored.eventId === "string" ? stored.eventId : undefined;
        if (eventId) keys.push(this.#key("id", eventId));
      }
      keys.push(...eventKeys, this.#key("seq", streamId));
    }
    this.#streams.clear();
    if (keys.length > 0) await this.#keyv.delete(keys);
  }

  async #store(streamId: StreamId, seq: number, eventId: EventId, message: JSONRPCMessage): Promise<void> {
    const event: StoredEvent = { eventId, message: JSON.stringify(message) };
    const position: EventPosition = { streamId, seq };
    await this.#keyv.set(this.#key("e", streamId, seq), event, this.#ttlMs);
    await this.#keyv.set(this.#key("id", eventId), position, this.#ttlMs);
    await this.#keyv.set(this.#key("seq", streamId), seq, this.#ttlMs);
    if (seq > this.#maxEvents) await this.#evict(streamId, seq - this.#maxEvents);
  }

  /** Deletes a stream's oldest event and its id: resuming from it is then refused, not gappy. */
  async #evict(streamId: StreamId, seq: number): Promise<void> {
    const key = this.#key("e", streamId, seq);
    const evicted = await this.#keyv.get(key);
    const keys = [key];
    if (isRecord(evicted) && typeof evicted.eventId === "string") keys.push(this.#key("id", evicted.eventId));
    await this.#keyv.delete(keys);
  }

  async #position(eventId: EventId): Promise<EventPosition | undefined> {
    if (typeof eventId !== "string" || eventId.length === 0 || eventId.length > 200) return undefined;
    const stored = await this.#keyv.get(this.#key("id", eventId));
    if (!isRecord(stored) || typeof stored.streamId !== "string") return undefined;
    const seq = asSeq(stored.seq);
    return seq === undefined ? undefined : { streamId: stored.streamId, seq };
  }

  async #getMany(keys: string[]): Promise<unknown[]> {
    if (keys.length === 0) return [];
    if (typeof this.#keyv.getMany === "function") return this.#keyv.getMany(keys);
    return Promise.all(keys.map((key) => this.#keyv.get(key)));
  }

  #key(...parts: Array<string | number>): string {
    return [this.#base, ...parts].join(":");
  }
}

/** The bounds with their defaults, checked (a TypeError names the bad one). */
export function eventStoreBounds(options: KeyvEventStoreOptions = {}): { maxEventsPerStream: number; ttlMs: number } {
  const maxEventsPerStream = options.maxEventsPerStream ?? 1000;
  const ttlMs = options.ttlMs ?? 60 * 60_000;
  if (!Number.isInteger(maxEventsPerStream) || maxEventsPerStream < 1)
    throw new TypeError("eventStore: maxEventsPerStream must be a whole number of at least 1");
  if (!Number.isFinite(ttlMs) || ttlMs <= 0) throw new TypeError("eventStore: ttlMs must be a positive number");
  return { maxEventsPerStream, ttlMs };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function asSeq(value: unknown): number | undefined {
  return Number.isSafeInteger(value) && (value as number) > 0 ? (value as number) : undefined;
}

/**
 * A stored event, checked: its id a string, its message a JSON-RPC message. The transport's
 * priming events (an empty `{}`) carry nothing to replay and are skipped with the malformed ones.
 */
function asEvent(stored: unknown): { eventId: EventId; message: JSONRPCMessage } | undefined {
  if (!isRecord(stored) || typeof stored.eventId !== "string" || typeof stored.message !== "string") return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(stored.message);
  } catch {
    return undefined;
  }
  const message = JSONRPCMessageSchema.safeParse(parsed);
  return message.success ? { eventId: stored.eventId, message: message.data } : undefined;
}
