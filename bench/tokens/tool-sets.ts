/**
 * The tool sets of the token benchmark, about 10, 100 and 1,000 tools, each offered two ways:
 * as direct tools (one AI SDK tool per method, named `<source>_<method>`, with the description
 * and JSON Schema the source gives) and as Code Mode connectors (one per source).
 *
 * The tools are real: the tasks' own connectors (bench/tokens/task-tools.ts), the quickstart's
 * example connectors, and the tools of three MCP servers shipped on npm, started as child
 * processes and listed over stdio (`@modelcontextprotocol/server-everything`, `server-filesystem`,
 * `server-memory`): their `tools/list` answer is what the AI SDK's MCP client would hand the model,
 * and `mcpConnector` makes the Code Mode connectors from the same servers. Past the real ones, a
 * set grows by copies of the MCP servers under distinct names (`filesystem_2`, …): the same real
 * schemas, as a team running several instances of one server would have.
 */
import { createRequire } from "node:module";
import { type Connector, defineConnector } from "@codemode/core";
import { mcpConnector } from "@codemode/core/mcp";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { catalog, shop } from "../../examples/quickstart/shop.ts";
import { TASK_CONNECTORS } from "./task-tools.ts";

/** One tool as a direct-calling app hands it to the AI SDK. */
export interface DirectTool {
  name: string;
  description?: string;
  inputSchema: Record<string, unknown>;
}

/** One source of tools: a Code Mode connector, and the same tools for direct calling. */
export interface ToolSource {
  name: string;
  /** "task", "example", "MCP server-filesystem 2026.8.31", or "copy of …". */
  origin: string;
  connector: Connector;
  direct: DirectTool[];
}

export interface ToolSet {
  /** "about 10", "about 100", "about 1,000". */
  label: string;
  sources: ToolSource[];
  toolCount: number;
}

const SERVERS = [
  { name: "everything", package: "@modelcontextprotocol/server-everything", args: [] as string[] },
  { name: "filesystem", package: "@modelcontextprotocol/server-filesystem", args: [process.cwd()] },
  { name: "memory", package: "@modelcontextprotocol/server-memory", args: [] as string[] },
];

const require = createRequire(import.meta.url);

/** Starts the MCP servers and lists their tools; `close()` ends them. */
export async function openToolSources(): Promise<{ sources: ToolSource[]; mcp: ToolSource[]; close(): Promise<void> }> {
  const clients: Client[] = [];
  const mcp: ToolSource[] = [];
  try {
    for (const server of SERVERS) {
      const manifest = require.resolve(`${server.package}/package.json`);
      const { version, bin } = require(manifest) as { version: string; bin: Record<string, string> };
      const main = new URL(Object.values(bin)[0]!, `file://${manifest}`).pathname;
      const client = new Client({ name: "codemode-token-bench", version: "1.0.0" });
      clients.push(client);
      await client.connect(
        new StdioClientTransport({ command: process.execPath, args: [main, ...server.args], stderr: "ignore" }),
      );
      const { tools } = await client.listTools();
      const connector = await mcpConnector({ name: server.name, client, watch: false });
      mcp.push({
        name: server.name,
        origin: `MCP ${server.package.replace("@modelcontextprotocol/", "")} ${version}`,
        connector,
        direct: tools.map((tool) => ({
          name: tool.name,
          ...(tool.description ? { description: tool.description } : {}),
          inputSchema: tool.inputSchema as Record<string, unknown>,
        })),
      });
    }
  } catch (error) {
    await Promise.allSettled(clients.map((client) => client.close()));
    throw error;
  }
  const own = [
    ...TASK_CONNECTORS.map((connector) => fromConnector(connector, "task")),
    ...[catalog, shop].map((connector) => fromConnector(connector, "example (quickstart)")),
  ];
  return {
    sources: [...own, ...mcp],
    mcp,
    close: async () => {
      await Promise.allSettled(clients.map((client) => client.close()));
    },
  };
}

function fromConnector(connector: Connector, origin: string): ToolSource {
  return {
    name: connector.name,
    origin,
    connector,
    direct: Object.entries(connector.tools).map(([name, tool]) => ({
      name,
      ...(tool.description ? { description: tool.description } : {}),
      inputSchema: (tool.inputSchema ?? { type: "object", properties: {} }) as Record<string, unknown>,
    })),
  };
}

/** Another instance of an MCP server under a distinct name: the same real schemas. */
function copyOf(source: ToolSource, instance: number): ToolSource {
  const name = `${source.name}_${instance}`;
  const { instructions } = source.connector;
  return {
    name,
    origin: `copy of ${source.name}`,
    connector: defineConnector({ name, ...(instructions ? { instructions } : {}), tools: source.connector.tools }),
    direct: source.direct,
  };
}

/**
 * The three sets: the tasks' own tools (about 10), then every real tool plus MCP copies until the
 * count reaches about 100 and about 1,000. The tasks' connectors are in every set.
 */
export function toolSets(sources: ToolSource[], mcp: ToolSource[]): ToolSet[] {
  const tasks = sources.filter((source) => source.origin === "task");
  // Copies round-robin over the servers, each added while it brings the count closer to the target.
  const grow = (target: number): ToolSource[] => {
    const chosen = [...sources];
    for (let instance = 2; ; instance++) {
      for (const server of mcp) {
        if (count(chosen) + server.direct.length / 2 > target) return chosen;
        chosen.push(copyOf(server, instance));
      }
    }
  };
  return [
    { label: "about 10", sources: tasks },
    { label: "about 100", sources: grow(100) },
    { label: "about 1,000", sources: grow(1_000) },
  ].map((set) => ({ ...set, toolCount: count(set.sources) }));
}

function count(sources: readonly ToolSource[]): number {
  return sources.reduce((sum, source) => sum + source.direct.length, 0);
}
