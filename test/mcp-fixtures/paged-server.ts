/**
 * A low-level SDK `Server` that lists its tools a few per page (McpServer lists all at once), and
 * can change them and say so with notifications/tools/list_changed.
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CallToolRequestSchema, ListToolsRequestSchema, type Tool } from "@modelcontextprotocol/sdk/types.js";

export interface PagedServer {
  server: Server;
  /** The tools/list requests received, by the cursor each asked for. */
  listed: Array<string | undefined>;
  /** Replaces the tool set and sends notifications/tools/list_changed. */
  setTools(tools: Tool[]): Promise<void>;
}

/** A tool named `name` that echoes its arguments as structured content. */
export function echoTool(name: string, extra: Partial<Tool> = {}): Tool {
  return {
    name,
    description: `Echoes (${name}).`,
    inputSchema: { type: "object", properties: { text: { type: "string" } } },
    ...extra,
  };
}

export function createPagedServer(initial: Tool[], pageSize = 2): PagedServer {
  let tools = initial;
  const listed: Array<string | undefined> = [];
  const server = new Server({ name: "paged", version: "1.0.0" }, { capabilities: { tools: { listChanged: true } } });
  server.setRequestHandler(ListToolsRequestSchema, (request) => {
    const cursor = request.params?.cursor;
    listed.push(cursor);
    const start = cursor === undefined ? 0 : Number(cursor);
    const end = start + pageSize;
    return { tools: tools.slice(start, end), ...(end < tools.length ? { nextCursor: String(end) } : {}) };
  });
  server.setRequestHandler(CallToolRequestSchema, (request) => ({
    content: [{ type: "text", text: `called ${request.params.name}` }],
    structuredContent: { tool: request.params.name, args: request.params.arguments ?? {} },
  }));
  return {
    server,
    listed,
    async setTools(next) {
      tools = next;
      await server.sendToolListChanged();
    },
  };
}
