import type { Connector } from "../../connectors/define-connector.js";
import { connectorDeclaration, toolDeclaration } from "../../connectors/schema-to-typescript.js";
import { type SearchEntry, type SearchResult, searchCatalog } from "../../connectors/search.js";
import type { Snippet, SnippetStore } from "../../snippets/snippets.js";

export interface SearchOutput {
  query: string;
  results: SearchResult[];
  truncated: boolean;
}

/**
 * What `describe` answers: a connector, a method, a snippet, or an error. Every variant lists the
 * other variants' members as absent (`?: undefined`), so `(await runtime.describe("x.y")).declaration`
 * reads as `string | undefined` with no `in` check; `kind` (or `error`) tells them apart.
 */
export type DescribeOutput =
  | {
      kind: "connector";
      path: string;
      description?: string;
      methods: string[];
      declaration: string;
      requiresApproval?: undefined;
      source?: undefined;
      connectors?: undefined;
      inputSchema?: undefined;
      error?: undefined;
    }
  | {
      kind: "method";
      path: string;
      description?: string;
      requiresApproval: boolean | "depends on arguments";
      declaration: string;
      methods?: undefined;
      source?: undefined;
      connectors?: undefined;
      inputSchema?: undefined;
      error?: undefined;
    }
  | {
      kind: "snippet";
      path: string;
      description?: string;
      source: string;
      connectors: string[];
      inputSchema?: unknown;
      methods?: undefined;
      requiresApproval?: undefined;
      declaration?: undefined;
      error?: undefined;
    }
  | {
      error: string;
      kind?: undefined;
      path?: undefined;
      description?: undefined;
      methods?: undefined;
      requiresApproval?: undefined;
      declaration?: undefined;
      source?: undefined;
      connectors?: undefined;
      inputSchema?: undefined;
    };

/**
 * What `codemode.search`, `codemode.describe` and `codemode.run` answer, and the runtime's own
 * `search`/`describe` (R-SN-3): the same data on both sides.
 */
export class Discovery {
  constructor(
    private readonly connectors: ReadonlyMap<string, Connector>,
    private readonly snippets: SnippetStore,
  ) {}

  async search(query: unknown, limit?: number): Promise<SearchOutput> {
    const text = typeof query === "string" ? query : "";
    const entries: SearchEntry[] = [];
    for (const connector of this.connectors.values()) {
      for (const [method, tool] of Object.entries(connector.tools)) {
        const entry: SearchEntry = {
          kind: "method",
          path: `${connector.name}.${method}`,
          connector: connector.name,
          method,
          requiresApproval: tool.requiresApproval !== undefined && tool.requiresApproval !== false,
        };
        if (tool.description) entry.description = tool.description;
        if (connector.instructions) entry.instructions = connector.instructions;
        entries.push(entry);
      }
    }
    for (const snippet of await this.snippets.list()) {
      const entry: SearchEntry = { kind: "snippet", path: snippet.name };
      if (snippet.description) entry.description = snippet.description;
      entries.push(entry);
    }
    const found = searchCatalog(entries, text, limit === undefined ? {} : { limit });
    return { query: text, ...found };
  }

  async describe(target: unknown): Promise<DescribeOutput> {
    if (typeof target !== "string" || target === "")
      return { error: 'describe needs a path such as "github", "github.create_issue" or a snippet name' };
    const connector = this.connectors.get(target);
    if (connector) {
      const output: DescribeOutput = {
        kind: "connector",
        path: target,
        methods: Object.keys(connector.tools),
        declaration: connectorDeclaration(connector),
      };
      if (connector.instructions) output.description = connector.instructions;
      return output;
    }
    const dot = target.indexOf(".");
    if (dot > 0) {
      const owner = this.connectors.get(target.slice(0, dot));
      const method = target.slice(dot + 1);
      const tool = owner && Object.hasOwn(owner.tools, method) ? owner.tools[method] : undefined;
      if (owner && tool) {
        const rule = tool.requiresApproval;
        const output: DescribeOutput = {
          kind: "method",
          path: target,
          requiresApproval: typeof rule === "function" ? "depends on arguments" : rule === true,
          declaration: toolDeclaration(owner.name, method, tool),
        };
        if (tool.description) output.description = tool.description;
        return output;
      }
    }
    const snippet = await this.snippets.get(target);
    if (snippet) {
      const output: DescribeOutput = {
        kind: "snippet",
        path: snippet.name,
        source: snippet.code,
        connectors: [...snippet.connectors],
      };
      if (snippet.description) output.description = snippet.description;
      if (snippet.inputSchema) output.inputSchema = snippet.inputSchema;
      return output;
    }
    return { error: `nothing is named "${target}": use codemode.search to find methods and snippets` };
  }

  /**
   * The source the sandbox runs for `codemode.run(name, input)`, or `{ error }` naming what is
   * missing (R-SN-2): never a throw. The source is read (normalized) where the program runs, by
   * the sandbox host (pass-requests.ts), never on the runtime's event loop (R-SB-8).
   */
  async snippetSource(name: unknown): Promise<{ source: string; name: string } | { error: string }> {
    if (typeof name !== "string" || name === "") return { error: "codemode.run needs a snippet name" };
    const snippet: Snippet | undefined = await this.snippets.get(name);
    if (!snippet) return { error: `no snippet named "${name}": use codemode.search to find snippets` };
    const missing = snippet.connectors.filter((connectorName) => !this.connectors.has(connectorName));
    if (missing.length > 0)
      return {
        error: `snippet "${name}" needs connector${missing.length > 1 ? "s" : ""} ${missing.join(", ")}, not configured here`,
      };
    return { source: snippet.code, name };
  }
}
