import { readSync } from "node:fs";
import type { Socket } from "node:net";
import { availableParallelism } from "node:os";
import { deserialize, serialize } from "node:v8";

/**
 * The pipe a sandbox process and its parent speak over, beside Node's IPC channel: each message
 * is a frame (4-byte big-endian length, a format byte, then the message). A tool call's request
 * and its reply (strings and whole numbers only, host-protocol.ts) are JSON, a fifth of the cost
 * of V8's serializer for such small messages, except a reply with a long value, whose text
 * crosses as it is (FORMAT_VALUE_REPLY); every other message keeps V8's structured
 * serialization, as Node's "advanced" IPC writes it. Node's IPC adds an envelope and an event per
 * message on each side; this pipe reads raw bytes, and lets the sandbox process read its reply
 * without returning to its event loop (`FramedPipe.spinFor`), which is where most of a tool
 * call's round trip went: waking a sleeping process. Bun and Deno keep Node's IPC channel.
 */

/** The frame length's own bytes, then the format byte. */
const HEADER_BYTES = 5;
const FORMAT_V8 = 0;
const FORMAT_JSON = 1;
/**
 * A tool call's reply with a long value: the request's number (4 bytes), then the value's text
 * as UTF-8. The value is already wire text (JSON); wrapped in a JSON frame it would be escaped by
 * one side and unescaped by the other, two passes over a result that may be megabytes long.
 */
const FORMAT_VALUE_REPLY = 2;
/** Values at least this long take FORMAT_VALUE_REPLY; shorter ones cost as little as JSON. */
const RAW_VALUE_CHARS = 4_096;
/** Messages sent as JSON: a tool call's request and reply, on the path every call takes. */
const JSON_TYPES = new Set(["request", "reply"]);
/** A frame longer than this is a broken pipe, not a message (results are bounded far below it). */
const MAX_FRAME_BYTES = 1_024 * 1_024 * 1_024;
/** How a sandbox process learns the descriptor of its end of the pipe: `--frames=<fd>` in its argv. */
export const FRAMES_ARGUMENT = "--frames=";
/** The descriptor the pipe gets in the child: after stdin, stdout, stderr and the IPC channel. */
export const FRAMES_FD = 4;

/** Whether this runtime can give a child process the extra pipe (Node: yes; Bun and Deno keep IPC). */
export function framesSupported(): boolean {
  const versions = process.versions as Record<string, string | undefined>;
  return versions.bun === undefined && versions.deno === undefined;
}

/** One message as the bytes of its frame. */
export function encodeFrame(message: unknown): Buffer {
  const type = (message as { type?: unknown } | null)?.type;
  if (type === "reply") {
    const frame = encodeValueReply(message as { request?: unknown; reply?: unknown });
    if (frame) return frame;
  }
  if (typeof type === "string" && JSON_TYPES.has(type)) {
    const text = JSON.stringify(message);
    const length = Buffer.byteLength(text);
    const frame = Buffer.allocUnsafe(HEADER_BYTES + length);
    frame.writeUInt32BE(length, 0);
    frame[4] = FORMAT_JSON;
    frame.write(text, HEADER_BYTES);
    return frame;
  }
  const body = serialize(message);
  const frame = Buffer.allocUnsafe(HEADER_BYTES + body.length);
  frame.writeUInt32BE(body.length, 0);
  frame[4] = FORMAT_V8;
  body.copy(frame, HEADER_BYTES);
  return frame;
}

/**
 * A reply of exactly `{ type, request, reply: { kind: "value", value } }` whose value is long, as
 * a FORMAT_VALUE_REPLY frame; undefined for any other (a lone surrogate would not survive UTF-8).
 */
function encodeValueReply(message: { request?: unknown; reply?: unknown }): Buffer | undefined {
  const { request, reply } = message;
  if (typeof reply !== "object" || reply === null) return undefined;
  const { kind, value } = reply as { kind?: unknown; value?: unknown };
  // The length first: the short replies of the common path pay two property reads, no more.
  if (typeof value !== "string" || value.length < RAW_VALUE_CHARS || kind !== "value") return undefined;
  if (Object.keys(message).length !== 3 || Object.keys(reply).length !== 2) return undefined;
  if (!Number.isInteger(request) || (request as number) < 0 || (request as number) > 0xffff_ffff) return undefined;
  if (!value.isWellFormed()) return undefined;
  const length = 4 + Buffer.byteLength(value);
  const frame = Buffer.allocUnsafe(HEADER_BYTES + length);
  frame.writeUInt32BE(length, 0);
  frame[4] = FORMAT_VALUE_REPLY;
  frame.writeUInt32BE(request as number, HEADER_BYTES);
  frame.write(value, HEADER_BYTES + 4);
  return frame;
}

function decodeBody(format: number, body: Buffer): unknown {
  if (format === FORMAT_JSON) return JSON.parse(body.toString("utf8"));
  if (format === FORMAT_V8) return deserialize(body);
  if (format === FORMAT_VALUE_REPLY && body.length >= 4)
    return { type: "reply", request: body.readUInt32BE(0), reply: { kind: "value", value: body.toString("utf8", 4) } };
  throw new Error(`a frame of format ${format}: the pipe is out of step`);
}

/**
 * Reads frames out of chunks however the pipe split them. A large frame (a long result, a replay
 * of a long log) arrives in many chunks: they are kept as they came and joined once, when the
 * frame is whole, so a frame of n bytes costs O(n) copying, not a copy of all it has so far per chunk.
 */
export class FrameReader {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** Bytes the first frame pending needs, header included: the header's own until its length is read. */
  private needed = HEADER_BYTES;

  /** Takes a chunk; answers the messages it completed, in order. Throws on a frame no writer makes. */
  push(chunk: Buffer): unknown[] {
    if (chunk.length === 0) return [];
    this.pendingBytes += chunk.length;
    if (this.pendingBytes < this.needed) {
      // Kept as a copy: the chunk may be a buffer its reader reuses (`spinFor`'s).
      this.pending.push(Buffer.from(chunk));
      return [];
    }
    this.pending.push(chunk);
    let bytes = this.pending.length === 1 ? this.pending[0]! : Buffer.concat(this.pending, this.pendingBytes);
    const messages: unknown[] = [];
    this.needed = HEADER_BYTES;
    for (;;) {
      if (bytes.length < HEADER_BYTES) break;
      const length = bytes.readUInt32BE(0);
      if (length > MAX_FRAME_BYTES) throw new Error(`a frame of ${length} bytes: the pipe is out of step`);
      if (bytes.length < HEADER_BYTES + length) {
        this.needed = HEADER_BYTES + length;
        break;
      }
      messages.push(decodeBody(bytes[4]!, bytes.subarray(HEADER_BYTES, HEADER_BYTES + length)));
      bytes = bytes.subarray(HEADER_BYTES + length);
    }
    // What is left is copied for the same reason, and so that a kept tail does not hold a large
    // chunk alive.
    this.pending = bytes.length === 0 ? [] : [Buffer.from(bytes)];
    this.pendingBytes = bytes.length;
    return messages;
  }
}

/** A chunk that `readSync` fills while spinning; reused. */
const SPIN_CHUNK_BYTES = 64 * 1_024;

/**
 * One end of the pipe: `send` writes a frame, `onMessage` is called with each message read. The
 * socket is read in paused mode, so that bytes the event loop has read (in the socket's buffer)
 * are always taken before bytes read straight from the descriptor by `spinFor`.
 */
export class FramedPipe {
  private readonly reader = new FrameReader();
  private scratch: Buffer | undefined;

  constructor(
    private readonly socket: Socket,
    private readonly onMessage: (message: unknown) => void,
    private readonly onBroken: (error: Error) => void,
    /** The descriptor under the socket, for `spinFor` (the child's end); undefined where it may not spin. */
    private readonly fd?: number,
  ) {
    socket.on("readable", () => this.drainSocket());
  }

  /** Keeps the event loop alive for the pipe (a pass is running), or lets it go (idle). */
  ref(): void {
    this.socket.ref();
  }

  unref(): void {
    this.socket.unref();
  }

  send(message: unknown): void {
    if (this.socket.destroyed || !this.socket.writable) return;
    this.socket.write(encodeFrame(message));
  }

  /**
   * Reads the descriptor without returning to the event loop, for up to `budgetMs`, and hands on
   * the messages that came; true when at least one did. A sandbox process waiting for the reply
   * to a tool call spins so: the parent answers a fast call in tens of microseconds, and a process
   * that went to sleep for it would spend as much again being woken up.
   */
  spinFor(budgetMs: number): boolean {
    if (this.fd === undefined) return false;
    if (this.drainSocket()) return true;
    this.scratch ??= Buffer.allocUnsafe(SPIN_CHUNK_BYTES);
    const scratch = this.scratch;
    const until = performance.now() + budgetMs;
    // An empty pipe answers EAGAIN as a thrown error: without a stack trace it costs little.
    const stackTraceLimit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    try {
      do {
        let count: number;
        try {
          count = readSync(this.fd, scratch, 0, scratch.length, null);
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code === "EAGAIN") continue;
          return false;
        }
        // The other end closed: the socket's own 'end' says so through the event loop.
        if (count === 0) return false;
        if (this.take(scratch.subarray(0, count))) return true;
      } while (performance.now() < until);
      return false;
    } finally {
      Error.stackTraceLimit = stackTraceLimit;
    }
  }

  /** Takes what the socket has read; true when a message came out of it. */
  private drainSocket(): boolean {
    let delivered = false;
    for (let chunk = this.socket.read() as Buffer | null; chunk !== null; chunk = this.socket.read() as Buffer | null)
      if (this.take(chunk)) delivered = true;
    return delivered;
  }

  private take(chunk: Buffer): boolean {
    let messages: unknown[];
    try {
      messages = this.reader.push(chunk);
    } catch (error) {
      this.onBroken(error as Error);
      return false;
    }
    for (const message of messages) this.onMessage(message);
    return messages.length > 0;
  }
}

/**
 * When a sandbox process spins for a reply rather than sleep: only with a core to spare (on one
 * core the spinning would hold back the parent that answers), and only while replies come within
 * the budget. A reply that took longer (a tool doing real I/O, a store over the network) turns
 * spinning off until one comes within the budget again, so slow tools cost no spinning.
 */
export class SpinPolicy {
  private lastWithinBudget = true;
  private readonly worthIt: boolean;

  constructor(
    readonly budgetMs: number,
    cores = availableParallelism(),
  ) {
    this.worthIt = cores > 1 && budgetMs > 0;
  }

  get shouldSpin(): boolean {
    return this.worthIt && this.lastWithinBudget;
  }

  /** How long the last reply took from its request, in ms. */
  replied(afterMs: number): void {
    this.lastWithinBudget = afterMs <= this.budgetMs;
  }
}
