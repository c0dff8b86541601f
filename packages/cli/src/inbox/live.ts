import type { IncomingMessage, ServerResponse } from "node:http";
import type { InboxEventName, InboxQueue, InboxRuntime } from "./inbox-options.js";
import { BASE_HEADERS } from "./security.js";

const QUEUE_EVENTS: readonly InboxEventName[] = ["paused", "completed", "error", "rejected", "stalled", "failed"];
const HEARTBEAT_MS = 20_000;

/**
 * Server-Sent Events for open pages: `changed` when the listing changed (pages then fetch their
 * content again), `trouble` while the store cannot be read, `recovered` when it can again. One
 * poll serves every page and runs only while a page is open; a fleet queue's lifecycle events
 * announce a change the moment a worker reports it.
 */
export class LiveUpdates {
  private readonly clients = new Set<ServerResponse>();
  private timer: NodeJS.Timeout | undefined;
  private heartbeat: NodeJS.Timeout | undefined;
  private fingerprint: string | undefined;
  private trouble = false;
  private polling = false;
  private closed = false;
  private readonly onQueueEvent = () => this.changed();

  constructor(
    private readonly runtime: InboxRuntime,
    private readonly pollMs: number,
    private readonly queue: InboxQueue | undefined,
  ) {
    for (const name of QUEUE_EVENTS) queue?.events.on(name, this.onQueueEvent);
  }

  /** Takes an `EventSource` request and keeps it until the page goes. */
  attach(request: IncomingMessage, response: ServerResponse): void {
    response.writeHead(200, {
      ...BASE_HEADERS,
      "content-type": "text/event-stream; charset=utf-8",
      connection: "keep-alive",
      "x-accel-buffering": "no",
    });
    response.write("retry: 3000\n\n");
    this.clients.add(response);
    request.on("close", () => {
      this.clients.delete(response);
      if (this.clients.size === 0) this.stop();
    });
    if (this.clients.size === 1) this.start();
  }

  /** Something changed (a decision made here, a queue event): every page refreshes. */
  changed(): void {
    this.fingerprint = undefined;
    this.send("changed", String(Date.now()));
    // The next poll takes the new state as its reference.
    if (this.clients.size > 0) this.schedule(50);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.stop();
    for (const name of QUEUE_EVENTS) this.queue?.events.off(name, this.onQueueEvent);
    for (const client of this.clients) client.end();
    this.clients.clear();
  }

  private start(): void {
    this.heartbeat = setInterval(() => this.comment("ping"), HEARTBEAT_MS);
    this.heartbeat.unref();
    this.schedule(0);
  }

  private stop(): void {
    clearTimeout(this.timer);
    clearInterval(this.heartbeat);
    this.timer = undefined;
    this.heartbeat = undefined;
  }

  private schedule(delay: number): void {
    clearTimeout(this.timer);
    if (this.closed) return;
    this.timer = setTimeout(() => void this.poll(), delay);
    this.timer.unref();
  }

  private async poll(): Promise<void> {
    if (this.polling || this.clients.size === 0) return;
    this.polling = true;
    try {
      const current = await fingerprintOf(this.runtime);
      if (this.trouble) {
        this.trouble = false;
        this.send("recovered", "");
      } else if (this.fingerprint !== undefined && current !== this.fingerprint) {
        this.send("changed", String(Date.now()));
      }
      this.fingerprint = current;
    } catch (error) {
      this.trouble = true;
      this.send("trouble", error instanceof Error ? (error.message.split("\n", 1)[0] ?? "") : String(error));
    } finally {
      this.polling = false;
      if (this.clients.size > 0) this.schedule(this.pollMs);
    }
  }

  private send(event: string, data: string): void {
    for (const client of this.clients) client.write(`event: ${event}\ndata: ${data.replace(/\n/g, " ")}\n\n`);
  }

  private comment(text: string): void {
    for (const client of this.clients) client.write(`: ${text}\n\n`);
  }
}

/** What the pages show, in a few bytes: a change in any of it is worth a refresh. */
async function fingerprintOf(runtime: InboxRuntime): Promise<string> {
  const [runs, pending] = await Promise.all([runtime.executions({ limit: 50 }), runtime.pending({ limit: 50 })]);
  return [
    ...runs.items.map((run) => `${run.id}:${run.status}:${run.updatedAt}`),
    "|",
    ...pending.items.map((action) => `${action.executionId}:${action.seq}`),
  ].join(",");
}
