import { createRequire } from "node:module";
import { toNodeHandler } from "@modelcontextprotocol/node";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { ModelOutputOptions } from "../adapters/model-output.js";
import type { CodemodeRuntime } from "../runtime/handle/index.js";
import { type HttpListenOptions, listenStreamableHttp, type McpHttpListener } from "./http-listener.js";
import { createModernHttpHandler, type ModernServerSetup } from "./modern-server.js";
import { createProgressFollowers, type ProgressFollowersOptions } from "./progress-followers.js";
import { createRuntimeTaskStore } from "./runtime-task-store.js";
import { outcomeResult, registerCodemodeTools, type ServerToolSettings } from "./server-tools.js";
import { serveStdioEitherProtocol } from "./stdio-either-protocol.js";

export interface CodemodeMcpServerOptions {
  /** The name and version the server gives in `initialize`. Default `codemode` and this package's version. */
  serverInfo?: { name: string; version: string };
  /**
   * Adds `pending`, `approve`, `decide` and `reject` for operators. Default false: an agent that can approve
   * its own pauses has no approval at all, so serve these only to people (or a separate server).
   */
  operatorTools?: boolean;
  /**
   * When a run pauses and the client supports (form) elicitation, ask the person there: a
   * 2025-11-25 client through `elicitation/create` in the same `execute` call; a 2026-07-28 client
   * inside its task (`input_required`, answered with `tasks/update`) or, without tasks, inside the
   * call (`input_required` and a signed request state). Accept applies each approve, deny (and,
   * for 2026 clients, edit); decline rejects the run. This trusts the client: whoever drives it
   * (the agent itself, if it answers its own questions) can accept. Turn it on only for clients
   * that show the question to a person. The audit log records the name the client gave as its
   * claim. Default false: `execute` answers the pause, and an operator decides.
   */
  elicitApproval?: boolean;
  /** How long one approval question waits for the person. Default 10 minutes. */
  elicitationTimeoutMs?: number;
  /** Bounds on the console output the agent sees. */
  modelOutput?: ModelOutputOptions;
  /**
   * Serve MCP tasks: a client that asks may run `execute` as a task and read it from any server
   * process over the same store. 2025-11-25 clients (experimental tasks): the task id is the
   * execution id; `tasks/get`, `tasks/result`, `tasks/cancel`. 2026-07-28 clients (the tasks
   * extension): the task id is the execution id signed by the runtime; `tasks/get` (with the
   * result), `tasks/update` (answers to a pause), `tasks/cancel`. `tasks/cancel` cancels the run
   * wherever it stands. Default true; clients that do not ask keep the plain answer.
   */
  tasks?: boolean;
  /** How long `execute` waits for a task's run before answering it, so a quick run's task has ended. Default 0. */
  taskAfterMs?: number;
  /** The `ttl` tasks report, in ms: how long a client may count on them. Default 7 days. */
  taskTtlMs?: number;
  /** How often a client should poll `tasks/get`, in ms. Default 2,000. */
  pollIntervalMs?: number;
  /**
   * Bounds on the progress of tasks (for clients that send a progress token): runs followed per
   * session (default 32) and per server (default 1,000), and reads of paused runs per second over
   * the whole server (default 1), each paused run read less often the longer it waits (up to
   * `maxPausedPollMs`, default 60 s).
   */
  taskProgress?: Pick<
    ProgressFollowersOptions,
    "maxFollowers" | "maxFollowersPerOwner" | "pausedReadsPerSecond" | "maxPausedPollMs" | "maxRunningPollMs"
  >;
}

/** Code Mode served over MCP: one SDK `Server` per connection, all over one runtime. */
export interface CodemodeMcpServer {
  /** A new SDK `Server` with the Code Mode tools, not connected: for transports you manage yourself. */
  createServer(): Server;
  /** Connects a new server to `transport` (in-memory, stdio, Streamable HTTP…); `close()` closes it. */
  connect(transport: Transport): Promise<Server>;
  /**
   * Serves this process's stdin/stdout, for clients that launch it as a command: the client's
   * first message says which protocol it speaks (an `initialize` for 2025-11-25, a request that
   * claims 2026-07-28, or `server/discover`), and the connection keeps it.
   */
  serveStdio(): Promise<{ close(): Promise<void> }>;
  /**
   * Serves Streamable HTTP on 127.0.0.1 (by default): a 2025-11-25 client gets a session, a
   * 2026-07-28 client is answered request by request on the same endpoint.
   */
  listen(options?: HttpListenOptions): Promise<McpHttpListener>;
  /** Closes every connection and listener it opened. The runtime stays open: it is yours. */
  close(): Promise<void>;
}

const INSTRUCTIONS =
  "Code Mode: instead of calling tools one by one, write a program that calls them. Use search to find methods, describe to read their TypeScript types, then execute an async arrow function. " +
  "A call that needs a person's approval pauses the program; it resumes after approval and every call before it keeps its recorded result.";

/**
 * Serves a Code Mode runtime as an MCP server (R-CON-5): `search`, `describe` and `execute` for
 * agents, `pending`/`approve`/`decide`/`reject` for operators when enabled. Every tool answers
 * `structuredContent` described by an `outputSchema`; `execute` answers the model-facing outcome.
 * When a run pauses and the client supports elicitation, the person is asked inside the client
 * (beyond): accept approves, decline rejects.
 *
 * @example
 * const mcp = createCodemodeMcpServer(runtime);
 * await mcp.serveStdio();                              // a desktop client launches this process
 * const http = await mcp.listen({ port: 3333 });       // or: http://127.0.0.1:3333/mcp
 */
export function createCodemodeMcpServer(
  runtime: CodemodeRuntime,
  options: CodemodeMcpServerOptions = {},
): CodemodeMcpServer {
  const settings: ServerToolSettings = {
    operatorTools: options.operatorTools === true,
    elicitApproval: options.elicitApproval === true,
    elicitationTimeoutMs: options.elicitationTimeoutMs ?? 10 * 60_000,
    modelOutput: options.modelOutput ?? {},
  };
  const tasks = options.tasks === false ? undefined : taskSettings(runtime, options);
  if (tasks) settings.tasks = tasks;
  // One store for every connection: its truth is the runtime's, so it holds no state of its own.
  const taskStore = tasks
    ? createRuntimeTaskStore(runtime, { ...tasks, toResult: (outcome) => outcomeResult(outcome, settings) })
    : undefined;
  const serverInfo = options.serverInfo ?? { name: "codemode", version: packageVersion() };
  const open = new Set<{ close(): Promise<void> }>();
  const track = <T extends { close(): Promise<void> }>(closable: T, onclose?: (handler: () => void) => void): T => {
    open.add(closable);
    onclose?.(() => open.delete(closable));
    return closable;
  };
  const modernSetup: ModernServerSetup = { runtime, settings, serverInfo, instructions: INSTRUCTIONS };
  const createServer = () => {
    const server: Server = new Server(serverInfo, {
      capabilities: {
        tools: { listChanged: false },
        // `logging/setLevel`: a run's console lines and calls as log messages (run-log.ts).
        logging: {},
        // No `list`: task ids are execution ids, and a listing would hand them to any client.
        ...(taskStore ? { tasks: { cancel: {}, requests: { tools: { call: {} } } } } : {}),
      },
      instructions: INSTRUCTIONS,
      ...(taskStore ? { taskStore } : {}),
    });
    registerCodemodeTools(server, runtime, settings);
    // A session that ends takes its progress followers with it.
    server.onclose = () => tasks?.followers.release(server);
    return server;
  };
  const connect = async (transport: Transport) => {
    const server = createServer();
    track(server, (handler) => {
      const released = server.onclose;
      server.onclose = () => {
        released?.();
        handler();
      };
    });
    await server.connect(transport);
    return server;
  };
  return {
    createServer,
    connect,
    serveStdio: async () =>
      track(
        await serveStdioEitherProtocol({
          legacy: (input, output) => connect(new StdioServerTransport(input, output)),
          modern: modernSetup,
        }),
      ),
    listen: async (listenOptions) => {
      const modern = createModernHttpHandler(modernSetup);
      const answerModern = toNodeHandler(modern);
      const listener = await listenStreamableHttp(createServer, listenOptions, (request, response, body) =>
        answerModern(request, response, body),
      );
      return track({
        url: listener.url,
        sessions: listener.sessions,
        async close() {
          await listener.close();
          await modern.close();
        },
      });
    },
    async close() {
      const closing = [...open];
      open.clear();
      tasks?.followers.close();
      await Promise.allSettled(closing.map((closable) => closable.close()));
    },
  };
}

const DEFAULT_TASK_TTL_MS = 7 * 24 * 60 * 60_000;

function taskSettings(
  runtime: CodemodeRuntime,
  options: CodemodeMcpServerOptions,
): NonNullable<ServerToolSettings["tasks"]> {
  const pollIntervalMs = options.pollIntervalMs ?? 2_000;
  return {
    afterMs: options.taskAfterMs ?? 0,
    ttlMs: options.taskTtlMs ?? DEFAULT_TASK_TTL_MS,
    pollIntervalMs,
    followers: createProgressFollowers({ ...options.taskProgress, runtime, pausedPollMs: pollIntervalMs }),
  };
}

function packageVersion(): string {
  try {
    // From src/mcp and from dist/mcp alike, the package's manifest is two folders up.
    const manifest: unknown = createRequire(import.meta.url)("../../package.json");
    const version = (manifest as { version?: unknown }).version;
    return typeof version === "string" ? version : "0.0.0";
  } catch {
    return "0.0.0";
  }
}
