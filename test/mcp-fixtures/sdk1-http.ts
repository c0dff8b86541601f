/**
 * An SDK 1.32 MCP server (protocol 2025-11-25) over Streamable HTTP on 127.0.0.1, with sessions:
 * each `initialize` gets a server of its own from `createServer`. A request outside a session (SDK
 * 2's `server/discover` probe) is refused as a 2025 server does, and the client falls back.
 */
import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";

export interface Sdk1HttpServer {
  url: URL;
  close(): Promise<void>;
}

export async function serveSdk1OverHttp(
  createServerForSession: () => { connect(transport: StreamableHTTPServerTransport): Promise<void> },
): Promise<Sdk1HttpServer> {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const http = createServer(async (request, response) => {
    let raw = "";
    for await (const chunk of request) raw += chunk;
    const body: unknown = raw ? JSON.parse(raw) : undefined;
    const sessionId = request.headers["mcp-session-id"];
    const session = typeof sessionId === "string" ? sessions.get(sessionId) : undefined;
    if (session) return session.handleRequest(request, response, body);
    if (sessionId === undefined && isInitializeRequest(body)) {
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => void sessions.set(id, transport),
      });
      await createServerForSession().connect(transport);
      return transport.handleRequest(request, response, body);
    }
    response
      .writeHead(400, { "content-type": "application/json" })
      .end(
        JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message: "Bad Request: no valid session" }, id: null }),
      );
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: new URL(`http://127.0.0.1:${port}/mcp`),
    async close() {
      await Promise.all([...sessions.values()].map((transport) => transport.close()));
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
