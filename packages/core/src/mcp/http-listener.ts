import { randomUUID } from "node:crypto";
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import Keyv from "keyv";
import { listenOn } from "../adapters/listen.js";
import { type EventKeyv, eventStoreBounds, KeyvEventStore, type KeyvEventStoreOptions } from "./kv-event-store.js";
import { claimsRevision } from "./protocol-names.js";

export interface HttpListenOptions {
  /** The port. Default 0: a free one, read it from the listener's `url`. */
  port?: number;
  /** The address to bind. Default "127.0.0.1". An address that is not loopback needs `allowRemote`. */
  host?: string;
  /** The endpoint's path. Default "/mcp". */
  path?: string;
  /**
   * Serve on an address other hosts can reach. The server has no authentication of its own (and
   * `execute` runs programs against your connectors), so put it behind yours. Default false.
   */
  allowRemote?: boolean;
  /** The largest request body accepted. Default 8 MB (programs may be up to 1,000,000 characters). */
  maxBodyBytes?: number;
  /**
   * Sessions open at once. An `initialize` beyond them closes the least recently used session that
   * has no request running (its client re-initializes when it comes back, as the protocol says),
   * and is refused (503) only when every session is busy. Default 100.
   */
  maxSessions?: number;
  /**
   * Sessions open at once from one client address, evicted the same way: a client that opens
   * session after session closes its own oldest, not other clients'. Default `maxSessions` on a
   * loopback address (every local client has the same one), 10 otherwise. Behind a proxy every
   * client has the proxy's address: cap them there.
   */
  maxSessionsPerClient?: number;
  /** A session with no request for this long, and none running, is closed. Default 30 minutes. */
  sessionIdleMs?: number;
  /**
   * Resumability: every message sent on a session's SSE streams is kept, so a client that lost a
   * stream reconnects with `Last-Event-ID` and gets what it missed. `keyv` is where (pass your
   * runtime's Keyv to keep them beside its executions); `maxEventsPerStream` (default 1000) and
   * `ttlMs` (default 1 hour) bound them, and a session's events are deleted when it closes.
   * Default: an in-memory Keyv of this listener. `false` turns resumability off.
   */
  eventStore?: false | (Omit<KeyvEventStoreOptions, "prefix"> & { keyv?: EventKeyv });
}

/** A Streamable HTTP endpoint: a session per 2025-11-25 client, request by request for 2026-07-28 clients. */
export interface McpHttpListener {
  /** Where clients connect, e.g. http://127.0.0.1:3333/mcp. */
  readonly url: URL;
  /** How many 2025-11-25 sessions are open (2026-07-28 requests keep none). */
  sessions(): number;
  /** Ends every session and stops listening. */
  close(): Promise<void>;
}

/** Answers one request of the 2026-07-28 protocol (no session: each request says who the client is). */
export type ModernRequestHandler = (request: IncomingMessage, response: ServerResponse, body: unknown) => Promise<void>;

type Session = {
  transport: StreamableHTTPServerTransport;
  server: Server;
  /** The client's address, for the cap per client. */
  address: string;
  lastSeen: number;
  running: number;
};
type EventStoreSettings = Omit<KeyvEventStoreOptions, "prefix"> & { keyv: EventKeyv };
const LOOPBACK_NAMES = new Set(["localhost", "127.0.0.1", "[::1]", "::1"]);

/**
 * Serves MCP over Streamable HTTP with Node's `http`: an `initialize` POST opens a session with a
 * new server from `createServer`; later requests name it in `Mcp-Session-Id`. A POST that claims
 * the 2026-07-28 revision goes to `modern` instead, when given (no session). On loopback, requests
 * whose `Host` or `Origin` is not loopback are refused (a web page must not reach the local server
 * by DNS rebinding), whichever protocol they speak.
 */
export async function listenStreamableHttp(
  createServer: () => Server,
  options: HttpListenOptions = {},
  modern?: ModernRequestHandler,
): Promise<McpHttpListener> {
  const host = options.host ?? "127.0.0.1";
  const loopback = isLoopbackAddress(host);
  if (!loopback && options.allowRemote !== true) {
    throw new TypeError(
      `listen: ${host} is not a loopback address; the Code Mode MCP server has no authentication of its own. Pass allowRemote: true behind your own authentication.`,
    );
  }
  const path = options.path ?? "/mcp";
  const maxBodyBytes = options.maxBodyBytes ?? 8 * 1024 * 1024;
  const sessions = new Map<string, Session>();
  const maxSessions = options.maxSessions ?? 100;
  const idleMs = options.sessionIdleMs ?? 30 * 60_000;
  if (!Number.isInteger(maxSessions) || maxSessions < 1)
    throw new TypeError("listen: maxSessions must be a whole number of at least 1");
  const maxPerClient = options.maxSessionsPerClient ?? (loopback ? maxSessions : Math.min(10, maxSessions));
  if (!Number.isInteger(maxPerClient) || maxPerClient < 1)
    throw new TypeError("listen: maxSessionsPerClient must be a whole number of at least 1");
  if (!Number.isFinite(idleMs) || idleMs <= 0) throw new TypeError("listen: sessionIdleMs must be a positive number");
  /** Closes the sessions idle for `idleMs` (nothing running, no request since). */
  const closeIdle = () => {
    const now = Date.now();
    for (const [id, session] of sessions) {
      if (session.running > 0 || now - session.lastSeen < idleMs) continue;
      sessions.delete(id);
      void session.server.close().catch(() => undefined);
    }
  };
  /** Closes the least recently used session with nothing running among `candidates`; false when all are busy. */
  const evictLeastRecent = (candidates: Iterable<[string, Session]>): boolean => {
    let oldest: [string, Session] | undefined;
    for (const entry of candidates) {
      if (entry[1].running === 0 && (!oldest || entry[1].lastSeen < oldest[1].lastSeen)) oldest = entry;
    }
    if (!oldest) return false;
    sessions.delete(oldest[0]);
    void oldest[1].server.close().catch(() => undefined);
    return true;
  };
  /** Room for one more session from `address`: the idle ones closed, then the least recently used evicted. */
  const makeRoom = (address: string): boolean => {
    const fromClient = () => [...sessions].filter(([, session]) => session.address === address);
    if (fromClient().length + openingFrom(address) >= maxPerClient && !evictLeastRecent(fromClient())) return false;
    if (sessions.size + opening.size >= maxSessions) closeIdle();
    return sessions.size + opening.size < maxSessions || evictLeastRecent(sessions);
  };
  const events = eventStoreSettings(options.eventStore);
  /** Sessions being opened, by client address: concurrent initializes must not pass the caps together. */
  const opening = new Map<symbol, string>();
  const openingFrom = (address: string) => [...opening.values()].filter((from) => from === address).length;
  const sweeper = setInterval(closeIdle, Math.max(1_000, Math.min(60_000, idleMs / 4)));
  sweeper.unref();

  const handle = async (request: IncomingMessage, response: ServerResponse) => {
    if (new URL(request.url ?? "/", "http://localhost").pathname !== path)
      return reply(response, 404, -32000, "Not found");
    if (loopback && !fromLoopback(request))
      return reply(response, 403, -32000, "Forbidden: this server only answers loopback hosts and origins");
    const sessionId = request.headers["mcp-session-id"];
    const body = request.method === "POST" ? await readJson(request, maxBodyBytes) : undefined;
    if (body && "failure" in body) return reply(response, body.failure.status, body.failure.code, body.failure.message);
    if (modern && request.method === "POST" && speaksModern(request, body?.value))
      return await modern(request, response, body?.value);
    if (typeof sessionId === "string") {
      const session = sessions.get(sessionId);
      if (!session) return reply(response, 404, -32001, "Session not found");
      session.lastSeen = Date.now();
      // A GET is the standby stream a client keeps open for as long as it likes: it does not make
      // the session busy, or one open stream would keep an abandoned session forever.
      if (request.method === "GET") return await session.transport.handleRequest(request, response, body?.value);
      session.running++;
      try {
        return await session.transport.handleRequest(request, response, body?.value);
      } finally {
        session.running--;
        session.lastSeen = Date.now();
      }
    }
    if (request.method !== "POST" || !isInitializeRequest(body?.value))
      return reply(response, 400, -32000, "Bad Request: no valid session ID provided");
    const address = request.socket.remoteAddress ?? "";
    if (!makeRoom(address))
      return reply(
        response,
        503,
        -32000,
        `Too many sessions: ${maxSessions} are open (at most ${maxPerClient} per client), each busy with a request; try again later`,
      );
    const server = createServer();
    // Counted from now: concurrent initializes must not pass the caps together.
    const ticket = Symbol(address);
    // Chosen first: the event store is per session (its stream ids repeat across sessions).
    const newSessionId = randomUUID();
    const eventStore = events && new KeyvEventStore(events.keyv, newSessionId, events);
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => newSessionId,
      eventStore,
      onsessioninitialized: (id) => {
        // Counted as open from here, not twice while its initialize is answered.
        opening.delete(ticket);
        sessions.set(id, { transport, server, address, lastSeen: Date.now(), running: 1 });
      },
    });
    // Set before connect: the server chains its own close handler after this one.
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
      void eventStore?.clear().catch(() => undefined);
    };
    opening.set(ticket, address);
    try {
      await server.connect(transport);
      await transport.handleRequest(request, response, body?.value);
    } finally {
      opening.delete(ticket);
      const opened = transport.sessionId ? sessions.get(transport.sessionId) : undefined;
      if (opened) {
        opened.running--;
        opened.lastSeen = Date.now();
      }
    }
  };

  const http = createHttpServer((request, response) => {
    handle(request, response).catch(() => {
      if (!response.headersSent) reply(response, 500, -32603, "Internal server error");
      else response.end();
    });
  });
  const port = await listenOn(http, options.port ?? 0, host);
  const url = new URL(`http://${host.includes(":") && !host.startsWith("[") ? `[${host}]` : host}:${port}${path}`);
  return {
    url,
    sessions: () => sessions.size,
    async close() {
      clearInterval(sweeper);
      const open = [...sessions.values()];
      sessions.clear();
      await Promise.allSettled(open.map(({ server }) => server.close()));
      await new Promise<void>((resolve) => {
        http.close(() => resolve());
        http.closeAllConnections();
      });
    },
  };
}

/**
 * Whether a POST speaks the 2026-07-28 protocol: it claims a revision in its params, or its header
 * names one newer than 2025's (the modern handler answers what it does not support). Everything
 * else, `initialize` first, goes to the 2025 sessions.
 */
function speaksModern(request: IncomingMessage, body: unknown): boolean {
  const header = request.headers["mcp-protocol-version"];
  return (typeof header === "string" && header >= "2026") || claimsRevision(body);
}

function eventStoreSettings(option: HttpListenOptions["eventStore"]): EventStoreSettings | undefined {
  if (option === false) return undefined;
  return { ...eventStoreBounds(option), keyv: option?.keyv ?? new Keyv() };
}

function isLoopbackAddress(host: string): boolean {
  return LOOPBACK_NAMES.has(host) || /^127(\.\d{1,3}){3}$/.test(host);
}

/** Whether the request's Host (and Origin, when a browser sent one) name this machine. */
function fromLoopback(request: IncomingMessage): boolean {
  const hostHeader = request.headers.host;
  if (!hostHeader || !isLoopbackAddress(hostnameOf(`http://${hostHeader}`))) return false;
  const origin = request.headers.origin;
  return origin === undefined || isLoopbackAddress(hostnameOf(origin));
}

function hostnameOf(address: string): string {
  try {
    return new URL(address).hostname;
  } catch {
    return "";
  }
}

type Body = { value: unknown } | { failure: { status: number; code: number; message: string } };

async function readJson(request: IncomingMessage, maxBytes: number): Promise<Body> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes)
      return { failure: { status: 413, code: -32000, message: `Request body larger than ${maxBytes} bytes` } };
    chunks.push(chunk);
  }
  try {
    return { value: JSON.parse(Buffer.concat(chunks).toString("utf8")) as unknown };
  } catch {
    return { failure: { status: 400, code: -32700, message: "Parse error: the body is not JSON" } };
  }
}

function reply(response: ServerResponse, status: number, code: number, message: string): void {
  response
    .writeHead(status, { "content-type": "application/json" })
    .end(JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null }));
}
