/**
 * Resumability over real Streamable HTTP (issue 27): the listener keeps each session's SSE events
 * in a Keyv event store, so the official client, having lost a stream, reconnects with
 * `Last-Event-ID` and gets what it missed.
 */
import { createCodemodeMcpServer } from "@codemode/core/mcp";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  LoggingMessageNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import Keyv from "keyv";
import { afterEach, describe, expect, it } from "vitest";
import { type HttpListenOptions, listenStreamableHttp } from "../packages/core/src/mcp/http-listener.ts";
import { acceptAll, agentClient, DELETE_TWO, notesRuntime, structuredOf } from "./mcp-fixtures/codemode-setup.ts";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

/**
 * A minimal server: `announce` logs the numbers `from`..`to` as notifications unrelated to the call
 * (they go on the standalone GET stream); `work` reports progress 1, 2, closes the call's stream
 * (SEP-1699 polling), reports 3, 4 while the client is away, then answers.
 */
function announcingServer(): Server {
  const server = new Server({ name: "announcer", version: "1.0.0" }, { capabilities: { tools: {}, logging: {} } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: ["announce", "work"].map((name) => ({ name, inputSchema: { type: "object" as const } })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const args = (request.params.arguments ?? {}) as { from?: number; to?: number };
    if (request.params.name === "announce") {
      for (let n = args.from ?? 1; n <= (args.to ?? 1); n++)
        await server.sendLoggingMessage({ level: "info", data: n });
      return { content: [{ type: "text", text: "announced" }] };
    }
    const progressToken = request.params._meta?.progressToken;
    const report = (progress: number) =>
      progressToken === undefined
        ? Promise.resolve()
        : extra.sendNotification({ method: "notifications/progress", params: { progressToken, progress, total: 4 } });
    await report(1);
    await report(2);
    extra.closeSSEStream?.();
    await sleep(100);
    await report(3);
    await report(4);
    return { content: [{ type: "text", text: "done" }] };
  });
  return server;
}

/** A fetch that can drop the client's GET streams and hold back its reconnects until released. */
function droppingFetch() {
  const gets: Array<{ lastEventId: string | null; drop: () => void }> = [];
  let release = () => {};
  let held = Promise.resolve();
  const fetchFn: FetchLike = async (url, init) => {
    if (init?.method !== "GET") return fetch(url, init);
    const lastEventId = new Headers(init.headers).get("last-event-id");
    if (lastEventId) await held;
    const connection = new AbortController();
    const signals = init.signal ? [connection.signal, init.signal] : [connection.signal];
    const response = await fetch(url, { ...init, signal: AbortSignal.any(signals) });
    gets.push({ lastEventId, drop: () => connection.abort() });
    return response;
  };
  return {
    fetchFn,
    gets,
    /** Reconnects wait until `release()`. */
    hold() {
      held = new Promise<void>((resolve) => (release = resolve));
    },
    release: () => release(),
  };
}

async function serve(options: HttpListenOptions = {}) {
  const listener = await listenStreamableHttp(announcingServer, options);
  cleanups.push(() => listener.close());
  const network = droppingFetch();
  const transport = new StreamableHTTPClientTransport(listener.url, {
    fetch: network.fetchFn,
    reconnectionOptions: {
      initialReconnectionDelay: 20,
      maxReconnectionDelay: 100,
      reconnectionDelayGrowFactor: 1.5,
      maxRetries: 5,
    },
  });
  const client = new Client({ name: "resuming-client", version: "1.0.0" });
  const logged: unknown[] = [];
  client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
    logged.push(notification.params.data);
  });
  await client.connect(transport);
  cleanups.push(() => client.close());
  return { listener, client, transport, network, logged };
}

describe("resumability over Streamable HTTP with the official client", () => {
  it("a client that loses its GET stream reconnects with Last-Event-ID and gets the notifications it missed, once each", async () => {
    const { client, network, logged } = await serve();
    await until(() => network.gets.length === 1, "the GET stream");
    await client.callTool({ name: "announce", arguments: { from: 1, to: 3 } });
    await until(() => logged.length === 3, "notifications 1-3");

    network.hold();
    network.gets[0]!.drop();
    await sleep(50); // the server sees the connection close
    await client.callTool({ name: "announce", arguments: { from: 4, to: 6 } });
    expect(logged).toEqual([1, 2, 3]);

    network.release();
    await until(() => logged.length >= 6, "the replayed notifications 4-6");
    await client.callTool({ name: "announce", arguments: { from: 7, to: 7 } });
    await until(() => logged.length >= 7, "notification 7 on the resumed stream");
    await sleep(50);
    expect(logged).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(network.gets).toHaveLength(2);
    expect(network.gets[1]!.lastEventId).toMatch(/^3\./);
  });

  it("a call whose stream the server closes mid-run resumes with Last-Event-ID: every progress report, then the result", async () => {
    const { client, network } = await serve();
    const progress: number[] = [];
    const result = await client.callTool({ name: "work", arguments: {} }, undefined, {
      onprogress: ({ progress: value }) => void progress.push(value),
    });
    expect(result.content).toEqual([{ type: "text", text: "done" }]);
    expect(progress).toEqual([1, 2, 3, 4]);
    expect(network.gets.some(({ lastEventId }) => lastEventId !== null)).toBe(true);
  });

  it("refuses bad bounds when listening", async () => {
    await expect(listenStreamableHttp(announcingServer, { eventStore: { maxEventsPerStream: 0 } })).rejects.toThrow(
      /maxEventsPerStream/,
    );
  });
});

describe("the Code Mode server keeps its events in the Keyv it is given", () => {
  it("serves execute with elicitation over resumable streams; ending the session deletes its events", async () => {
    const setup = await notesRuntime();
    const mcp = createCodemodeMcpServer(setup.runtime, { elicitApproval: true });
    cleanups.push(setup.close, mcp.close);
    const events = new Map<string, unknown>();
    const listener = await mcp.listen({ eventStore: { keyv: new Keyv({ store: events }), maxEventsPerStream: 50 } });
    const { client, asked } = agentClient(acceptAll());
    const transport = new StreamableHTTPClientTransport(listener.url);
    await client.connect(transport);
    cleanups.push(() => client.close());

    const outcome = structuredOf(await client.callTool({ name: "execute", arguments: { code: DELETE_TWO } }));
    expect(outcome).toMatchObject({ status: "completed" });
    expect(asked).toHaveLength(2);
    const sessionKeys = [...events.keys()].filter((key) => key.includes(`:${transport.sessionId}:`));
    expect(sessionKeys.length).toBeGreaterThan(0);

    await transport.terminateSession();
    await until(() => events.size === 0, "the session's events to be deleted");
  });
});
