// The config module `codemode-mcp` serves: it launches the notes MCP server, wraps it as the
// `notes` connector and hands back a runtime. A desktop MCP client launches Code Mode with
//
//   { "command": "npx", "args": ["codemode-mcp", "--config", "/path/to/codemode.config.ts"] }
//
// (Node 24 loads this .ts file as it is.) Listing an MCP server's tools is asynchronous, so the
// default export is an async factory: `await mcpConnector(…)`, then create the runtime.
import { fileURLToPath } from "node:url";
import { createCodemodeRuntime } from "@codemode/core";
import { type CodemodeMcpServerOptions, mcpConnector } from "@codemode/core/mcp";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

export default async function createRuntime() {
  const client = new Client({ name: "codemode", version: "1.0.0" });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [fileURLToPath(new URL("./notes-server.ts", import.meta.url))],
    }),
  );
  const notes = await mcpConnector({ name: "notes", client });
  // Any other connectors (defineConnector, AI SDK tools, more MCP servers) go beside it.
  return createCodemodeRuntime({ connectors: [notes] });
}

/**
 * Agents get search, describe and execute; pauses are put to the person through elicitation.
 * That trusts the client to show the question to a person: turn it on only for such clients.
 */
export const mcpServerOptions: CodemodeMcpServerOptions = { operatorTools: false, elicitApproval: true };
