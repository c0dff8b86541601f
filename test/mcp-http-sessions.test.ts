/**
 * Issue 43 (and finding 14 before it): the Streamable HTTP listener's sessions are bounded without
 * locking clients out. Full, it closes the least recently used session with nothing running; one
 * client address cannot hold more than its share, so a flood closes its own sessions, not others'.
 */
import { request as httpRequest } from "node:http";
import { createCodemodeMcpServer } from "@codemode/core/mcp";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterEach, describe, expect, it } from "vitest";
import { notesRuntime } from "./mcp-fixtures/codemode-setup.ts";

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const INITIALIZE = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "flood", version: "1" } },
});

/** One raw `initialize` POST from `localAddress` (127.0.0.x): the session id it got, if any, and the status. */
function initialize(url: URL, localAddress = "127.0.0.1"): Promise<{ status: number; sessionId?: string }> {
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(
      url,
      {
        method: "POST",
        localAddress,
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      },
      (response) => {
        response.resume();
        response.on("end", () => {
          const sessionId = response.headers["mcp-session-id"];
          resolve({ status: response.statusCode ?? 0, ...(typeof sessionId === "string" ? { sessionId } : {}) });
        });
      },
    );
    outgoing.on("error", reject);
    outgoing.end(INITIALIZE);
  });
}

async function serve(listenOptions: Parameters<ReturnType<typeof createCodemodeMcpServer>["listen"]>[0]) {
  const setup = await notesRuntime();
  const mcp = createCodemodeMcpServer(setup.runtime);
  const listener = await mcp.listen(listenOptions);
  cleanups.push(
    setup.close,
    () => mcp.close(),
    () => listener.close(),
  );
  return Object.assign(listener, { runtime: setup.runtime });
}

/** A POST in the session `sessionId` names, as a 2025 client sends it after `initialize`. */
function postInSession(url: URL, sessionId: string | undefined, body: unknown, headers: Record<string, string> = {}) {
  return fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-session-id": sessionId ?? "",
      ...headers,
    },
    body: JSON.stringify(body),
  });
}

async function sdkClient(url: URL): Promise<Client> {
  const client = new Client({ name: "newcomer", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(url));
  cleanups.push(() => client.close());
  return client;
}

describe("issue 43: the HTTP listener evicts its least recently used idle session instead of refusing clients", () => {
  it("after 2,000 initialize requests from one client, a new client is served and the sessions stay capped", {
    timeout: 120_000,
  }, async () => {
    const listener = await serve({});
    for (let batch = 0; batch < 100; batch++) {
      const answers = await Promise.all(Array.from({ length: 20 }, () => initialize(listener.url)));
      for (const answer of answers) expect(answer.status).toBe(200);
    }
    expect(listener.sessions()).toBe(100);
    const client = await sdkClient(listener.url);
    const tools = await client.listTools();
    expect(tools.tools.map((tool) => tool.name)).toContain("execute");
    expect(listener.sessions()).toBe(100);
  });

  it("an evicted session answers 404, and its client starts a new one", async () => {
    const listener = await serve({ maxSessions: 2 });
    const first = await initialize(listener.url);
    await initialize(listener.url);
    await initialize(listener.url);
    const answer = await postInSession(listener.url, first.sessionId, {
      jsonrpc: "2.0",
      id: 2,
      method: "tools/list",
      params: {},
    });
    expect(answer.status).toBe(404);
    expect(listener.sessions()).toBe(2);
  });

  it("one client address holds at most maxSessionsPerClient: its flood closes its own sessions, not another client's", {
    timeout: 60_000,
  }, async () => {
    const listener = await serve({ maxSessions: 8, maxSessionsPerClient: 3 });
    const kept = [await initialize(listener.url, "127.0.0.2"), await initialize(listener.url, "127.0.0.2")];
    for (let index = 0; index < 200; index++) expect((await initialize(listener.url, "127.0.0.3")).status).toBe(200);
    expect(listener.sessions()).toBe(5);
    for (const session of kept) {
      const answer = await postInSession(
        listener.url,
        session.sessionId,
        { jsonrpc: "2.0", method: "notifications/initialized" },
        { "mcp-protocol-version": "2025-11-25" },
      );
      expect(answer.status).toBe(202);
    }
  });

  it("a session busy with a request is never evicted: when every session is busy, an initialize is refused (503)", {
    timeout: 30_000,
  }, async () => {
    const listener = await serve({ maxSessions: 1 });
    const client = await sdkClient(listener.url);
    // A program that waits keeps its request running while the next client knocks.
    const running = client.callTool({
      name: "execute",
      arguments: { code: "async () => { await new Promise((resolve) => setTimeout(resolve, 3000)); return 1; }" },
    });
    // Knocks once the run has started (its request is then running), however loaded the machine.
    for (
      let wait = 0;
      wait < 200 && (await listener.runtime.executions({ status: "running" })).items.length === 0;
      wait++
    )
      await new Promise((resolve) => setTimeout(resolve, 10));
    expect(await initialize(listener.url)).toMatchObject({ status: 503 });
    await running;
    expect(await initialize(listener.url)).toMatchObject({ status: 200 });
  });
});

describe("finding 14: sessions nobody uses expire", () => {
  it("a session with no request for sessionIdleMs is closed by the sweep, an open standby stream or not", {
    timeout: 30_000,
  }, async () => {
    const listener = await serve({ sessionIdleMs: 1_000 });
    // An SDK client keeps a GET stream open; it does not keep an abandoned session alive.
    await sdkClient(listener.url);
    await initialize(listener.url);
    expect(listener.sessions()).toBe(2);
    for (let wait = 0; wait < 60 && listener.sessions() > 0; wait++)
      await new Promise((resolve) => setTimeout(resolve, 100));
    expect(listener.sessions()).toBe(0);
  });
});
