/**
 * A `codemode-mcp --config` module, as a user would write one: a factory that connects an MCP
 * server, wraps it with mcpConnector and returns the runtime. Loaded by the built bin in a child
 * process, so it imports the built packages.
 */
import { createCodemodeRuntime } from "@codemode/core";
import { mcpConnector } from "@codemode/core/mcp";
import { connectInMemory, createNotesServer } from "./notes-server.ts";

export default async function createRuntime() {
  const { server } = createNotesServer();
  const client = await connectInMemory(server);
  console.log("this line must not reach stdout: it carries the protocol");
  return createCodemodeRuntime({ connectors: [await mcpConnector({ name: "notes", client })] });
}
