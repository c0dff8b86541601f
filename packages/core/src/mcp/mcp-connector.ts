import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { type Connector, connectorProblems, type ToolDefinition } from "../connectors/define-connector.js";
import { schemaProblems } from "../connectors/validate-args.js";
import { CLIP_NOTE_CHARS, clipText } from "../sandbox/sandbox-limits.js";
import { McpConnectorError, mcpMethodNames } from "./mcp-method-names.js";
import {
  type McpApprovalDefault,
  type McpClient,
  type McpToolInfo,
  mcpToolDefinition,
  mcpToolInfo,
} from "./mcp-tool-definition.js";
import { isSdk2Client } from "./sdk2-client.js";
import { DEFAULT_TASK_TIMEOUT_MS } from "./task-deadline.js";
import { watchToolList } from "./watch-tool-list.js";

export interface McpConnectorOptions {
  /** The global the model's code sees (`notes` → `notes.add_note(…)`): a JavaScript identifier. */
  name: string;
  /**
   * A connected MCP client, over any transport: a `Client` of `@modelcontextprotocol/sdk` (SDK 1,
   * protocol 2025-11-25) or of `@modelcontextprotocol/client` (SDK 2, which also speaks 2026-07-28
   * when created with `versionNegotiation: { mode: "auto" }`). Both behave alike: same listing
   * bounds, timeouts, approvals, idempotency key and results.
   *
   * Tasks with SDK 2 on a 2026-07-28 connection (the tasks extension, `io.modelcontextprotocol/tasks`):
   * SDK 2.4 refuses a `resultType: "task"` answer, so the connector hooks the client's transport
   * (its `send` and `onmessage`) the first time it calls a tool: its own `tools/call` requests
   * declare the extension in their per-request capabilities, and their task answers are taken
   * aside and polled with `tasks/get`. Nothing else on the client changes: your own calls through
   * it declare nothing, so the server never answers them with a task. Nothing to set up; a client
   * that reconnects is hooked again on the next call.
   */
  client: McpClient;
  /** Told to the model in the Code Mode tool description. Default: the server's own instructions. */
  instructions?: string;
  /**
   * Per tool: gets the tool's name on the server, the method definition made from it and what
   * the server said about it; returns the definition to use (override `requiresApproval`,
   * `revert`, `replay`, `onInterrupted`, `description`…), `undefined` to keep it, or `null` to
   * leave the tool out. Default: every tool, as listed.
   *
   * @example
   * tool: (name, definition) => (name === "delete-note" ? { ...definition, requiresApproval: true } : undefined)
   */
  tool?: (name: string, definition: ToolDefinition, info: McpToolInfo) => ToolDefinition | null | undefined;
  /** Which tools pause for approval by default, from their annotations. Default "unless-read-only": the MCP specification's defaults. */
  approval?: McpApprovalDefault;
  /**
   * Follow `notifications/tools/list_changed`: the tool set is listed again for later passes.
   * Default true. On a 2026-07-28 connection (SDK 2) these notifications only come through a
   * `subscriptions/listen` stream: create the client with its `listChanged` option, which opens it.
   */
  watch?: boolean;
  /**
   * Least time between two refreshes that notifications start: a server that sends them in a
   * stream gets one listing per interval, with the latest tools. `refresh()` is not held back.
   * Default 1 000 ms.
   */
  refreshIntervalMs?: number;
  /**
   * Per request, how long to wait for the server's answer. Default the SDK's (60 s). For a tool
   * called as an upstream task, this bounds each request (creating the task, each poll), not the
   * task: see `taskTimeoutMs`.
   */
  timeoutMs?: number;
  /**
   * The longest a call run as an upstream task is awaited in all (the server declares the tasks
   * capability and the tool's `execution.taskSupport` is "optional" or "required"); then the task
   * is cancelled upstream and the call rejects. The wait also counts against the pass's own
   * `limits.timeoutMs`, which ends the pass sooner when it is shorter. Default 600 000 ms (10 min).
   */
  taskTimeoutMs?: number;
  /** Called with the new method names after a list_changed refresh changed the tool set. */
  onToolsChanged?: (methods: string[]) => void;
  /** Where a refresh that failed after creation is reported; the previous tool set stays. Default `console.warn`. */
  onError?: (error: Error) => void;
}

/** A connector over an MCP server, with what the server said about each tool. */
export interface McpConnector extends Connector {
  readonly mcp: {
    /** By method name: the tool's server name and annotations (`readOnly`, `destructive`, `idempotent`). */
    readonly tools: Readonly<Record<string, McpToolInfo>>;
  };
  /** Lists the server's tools again and replaces the tool set; rejects (keeping the old set) when that fails. */
  refresh(): Promise<void>;
}

const MAX_PAGES = 1_000;

/**
 * An MCP server's tools as a Code Mode connector (R-CON-5). Listing is asynchronous and
 * `createCodemodeRuntime` takes connectors synchronously, so this resolves to the connector once
 * every page of `tools/list` has been read: `await` it, then create the runtime. Each tool becomes
 * a method with its input and output schema; names are sanitised to identifiers (`add-note` →
 * `add_note`) and two tools landing on one name are refused; results are unwrapped
 * (`structuredContent`, else JSON text, else text; `isError` rejects with its text). Tools
 * annotated `destructiveHint: true` pause for approval unless the `tool` option says otherwise.
 *
 * When the server sends `notifications/tools/list_changed`, the tools are listed again and the
 * set is replaced in place: later passes (and `search`/`describe`) see the new tools.
 *
 * A tool the server runs as a task is called as a task and polled to its end, so a long upstream
 * job is not cut by the per-request timeout; the wait is bounded by `taskTimeoutMs` and by the
 * pass's own time limit, and the task is cancelled upstream when the wait ends first. On
 * 2025-11-25 that is the server's `tasks.requests.tools.call` capability with the tool's
 * `execution.taskSupport` "optional" or "required"; on 2026-07-28 (an SDK 2 client), the tasks
 * extension the server offers, where the server decides per call.
 *
 * The client may come from either SDK (`@modelcontextprotocol/sdk` or `@modelcontextprotocol/client`).
 *
 * @example
 * const client = new Client({ name: "my-app", version: "1.0.0" });
 * await client.connect(new StdioClientTransport({ command: "node", args: ["notes-server.js"] }));
 * const notes = await mcpConnector({ name: "notes", client });
 * const runtime = createCodemodeRuntime({ connectors: [notes] });
 *
 * @example
 * // SDK 2, speaking 2026-07-28 to servers that do and 2025-11-25 to the others
 * const client = new Client({ name: "my-app", version: "1.0.0" }, { versionNegotiation: { mode: "auto" } });
 * await client.connect(new StreamableHTTPClientTransport(new URL("http://127.0.0.1:3000/mcp")));
 * const builds = await mcpConnector({ name: "builds", client });
 */
export async function mcpConnector(options: McpConnectorOptions): Promise<McpConnector> {
  checkOptions(options);
  const { name, client } = options;
  const first = await listToolSet(options);
  // The runtime keeps this very object (it copies the connector, not its tools), so replacing
  // its entries in place is what makes a list_changed visible to later passes.
  const tools: Record<string, ToolDefinition> = {};
  const infos: Record<string, McpToolInfo> = {};
  const replace = (next: ToolSet) => {
    for (const method of Object.keys(tools)) delete tools[method];
    for (const method of Object.keys(infos)) delete infos[method];
    Object.assign(tools, next.tools);
    Object.assign(infos, next.infos);
  };
  replace(first);
  const refresh = serialised(async () => {
    const next = await listToolSet(options);
    const before = Object.keys(tools).join(",");
    replace(next);
    if (Object.keys(tools).join(",") !== before) options.onToolsChanged?.(Object.keys(tools));
  });
  const instructions = options.instructions ?? serverInstructions(client);
  const connector: McpConnector = Object.freeze({
    name,
    ...(instructions ? { instructions } : {}),
    tools,
    mcp: Object.freeze({ tools: infos }),
    refresh,
    kind: "codemode-connector" as const,
  });
  if (options.watch !== false) {
    const onError = options.onError ?? ((error: Error) => console.warn(`[codemode] ${error.message}`));
    watchToolList(client, throttled(refresh, options.refreshIntervalMs ?? DEFAULT_REFRESH_INTERVAL_MS), onError);
  }
  return connector;
}

/**
 * Characters kept of the instructions an MCP server sends. The server is not trusted: what it says
 * reaches `codemode.describe` and, one line of it, the model's description of the tool.
 */
export const MAX_SERVER_INSTRUCTIONS_CHARS = 2_000;

function serverInstructions(client: McpClient): string | undefined {
  const sent: unknown = client.getInstructions();
  if (typeof sent !== "string" || sent.trim() === "") return undefined;
  // The project's cut (a flat copy: a slice would keep megabytes of the original alive), note included in the bound.
  return clipText(sent, MAX_SERVER_INSTRUCTIONS_CHARS - CLIP_NOTE_CHARS);
}

type ToolSet = { tools: Record<string, ToolDefinition>; infos: Record<string, McpToolInfo> };

/** Every page of the server's tools, turned into checked method definitions. */
async function listToolSet(options: McpConnectorOptions): Promise<ToolSet> {
  const { name, client } = options;
  const kept: Array<{ info: McpToolInfo; definition: ToolDefinition }> = [];
  for (const tool of await listAllTools(client, name)) {
    const info = mcpToolInfo(tool);
    const made = mcpToolDefinition(client, info, `${name}.${tool.name}`, {
      approval: options.approval ?? "unless-read-only",
      ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}),
      taskTimeoutMs: options.taskTimeoutMs ?? DEFAULT_TASK_TIMEOUT_MS,
    });
    const definition = options.tool ? options.tool(tool.name, made, info) : undefined;
    if (definition === null) continue;
    kept.push({ info, definition: definition ?? made });
  }
  const methods = mcpMethodNames(
    name,
    kept.map(({ info }) => info.name),
  );
  const set: ToolSet = { tools: {}, infos: {} };
  for (const { info, definition } of kept) {
    const method = methods.get(info.name)!;
    set.tools[method] = definition;
    set.infos[method] = info;
  }
  // The runtime would refuse these at creation; say so here, naming the server's tool.
  const problems = connectorProblems({ name, tools: set.tools });
  for (const [method, definition] of Object.entries(set.tools))
    problems.push(...schemaProblems(`${name}.${method}`, definition));
  if (problems.length > 0) throw new McpConnectorError(`mcpConnector("${name}"): ${problems.join("; ")}`);
  return set;
}

/** `tools/list`, following `nextCursor` to the last page. */
async function listAllTools(client: McpClient, name: string): Promise<Tool[]> {
  const tools: Tool[] = [];
  const cursors = new Set<string>();
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page += 1) {
    const listed = await listPage(client, cursor);
    tools.push(...listed.tools);
    cursor = listed.nextCursor;
    if (cursor === undefined) return tools;
    // A server that hands back a cursor it gave before would keep this loop going for ever.
    if (cursors.has(cursor))
      throw new McpConnectorError(
        `mcpConnector("${name}"): the server's tools/list repeated the cursor ${JSON.stringify(cursor)}`,
      );
    cursors.add(cursor);
  }
  throw new McpConnectorError(`mcpConnector("${name}"): the server's tools/list went on past ${MAX_PAGES} pages`);
}

/**
 * One page of `tools/list`. SDK 2's `listTools()` without a cursor walks every page itself, up to
 * its own bound, so with SDK 2 each page is asked for as a request of its own: the connector's
 * bounds (MAX_PAGES, no cursor twice) hold whichever SDK the client comes from.
 */
async function listPage(
  client: McpClient,
  cursor: string | undefined,
): Promise<{ tools: Tool[]; nextCursor?: string }> {
  if (!isSdk2Client(client)) return client.listTools(cursor === undefined ? undefined : { cursor });
  const page = await client.request({ method: "tools/list", ...(cursor === undefined ? {} : { params: { cursor } }) });
  return page as { tools: Tool[]; nextCursor?: string };
}

const DEFAULT_REFRESH_INTERVAL_MS = 1_000;

/**
 * Starts `task` at most once per `intervalMs`: a call within the interval of the last start
 * waits for its end, and every call made meanwhile shares that one run.
 */
function throttled(task: () => Promise<void>, intervalMs: number): () => Promise<void> {
  let lastStart = Number.NEGATIVE_INFINITY;
  let waiting: Promise<void> | undefined;
  const start = () => {
    lastStart = Date.now();
    return task();
  };
  return () => {
    const wait = lastStart + intervalMs - Date.now();
    if (wait <= 0 && !waiting) return start();
    waiting ??= new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => {
          waiting = undefined;
          start().then(resolve, reject);
        },
        Math.max(0, wait),
      );
      timer.unref();
    });
    return waiting;
  };
}

/** Runs `task` one at a time; calls made while it runs share one further run after it. */
function serialised(task: () => Promise<void>): () => Promise<void> {
  let running: Promise<void> | undefined;
  let queued: Promise<void> | undefined;
  const start = (): Promise<void> => {
    running = task().finally(() => {
      running = undefined;
    });
    return running;
  };
  return () => {
    if (!running) return start();
    queued ??= running
      .catch(() => undefined)
      .then(() => {
        queued = undefined;
        return start();
      });
    return queued;
  };
}

function checkOptions(options: McpConnectorOptions): void {
  if (typeof options !== "object" || options === null) throw new TypeError("mcpConnector needs { name, client }");
  const client = options.client as Partial<McpClient> | undefined;
  if (typeof client?.listTools !== "function" || typeof client.callTool !== "function") {
    throw new TypeError(
      `mcpConnector("${String(options.name)}"): client must be a connected Client from @modelcontextprotocol/sdk or @modelcontextprotocol/client`,
    );
  }
  if (options.tool !== undefined && typeof options.tool !== "function")
    throw new TypeError(`mcpConnector("${String(options.name)}"): tool must be a function`);
  const approvals = ["destructive", "unless-read-only", "always", "never"];
  const interval = options.refreshIntervalMs;
  if (interval !== undefined && (typeof interval !== "number" || !Number.isFinite(interval) || interval < 0)) {
    throw new TypeError(`mcpConnector("${String(options.name)}"): refreshIntervalMs must be a number of at least 0`);
  }
  const taskTimeout = options.taskTimeoutMs;
  if (
    taskTimeout !== undefined &&
    (typeof taskTimeout !== "number" || !Number.isFinite(taskTimeout) || taskTimeout <= 0)
  ) {
    throw new TypeError(`mcpConnector("${String(options.name)}"): taskTimeoutMs must be a number above 0`);
  }
  if (options.approval !== undefined && !approvals.includes(options.approval))
    throw new TypeError(`mcpConnector("${String(options.name)}"): approval must be one of ${approvals.join(", ")}`);
}
