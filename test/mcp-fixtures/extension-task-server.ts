/**
 * An MCP server of SDK 2 (`@modelcontextprotocol/server`'s `McpServer` behind `createMcpHandler`)
 * that runs tools as tasks of the 2026-07-28 tasks extension (SEP-2663, `io.modelcontextprotocol/tasks`),
 * served over Streamable HTTP on 127.0.0.1 with `@modelcontextprotocol/node`'s `toNodeHandler`.
 * SDK 2.4 has no task runtime: the tasks live in a map of this server, `tasks/get` and
 * `tasks/cancel` are registered by hand.
 */
import { randomUUID } from "node:crypto";
import { createServer, type Server as HttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import { toNodeHandler } from "@modelcontextprotocol/node";
import {
  CLIENT_CAPABILITIES_META_KEY,
  createMcpHandler,
  McpServer,
  ProtocolError,
  ProtocolErrorCode,
} from "@modelcontextprotocol/server";
import * as z from "zod/v4";

export const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";

/** How long a task-run tool works before its task ends. */
export const EXTENSION_TASK_WORK_MS = 2_000;

type ToolResult = {
  content: Array<{ type: "text"; text: string }>;
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
};

interface TaskRecord {
  task: {
    taskId: string;
    status: "working" | "input_required" | "completed" | "failed" | "cancelled";
    statusMessage?: string;
    createdAt: string;
    lastUpdatedAt: string;
    ttlMs: number | null;
    pollIntervalMs: number;
  };
  result?: ToolResult;
  error?: { code: number; message: string };
  inputRequests?: Record<string, unknown>;
  timer?: NodeJS.Timeout;
}

export interface ExtensionTaskServer {
  url: URL;
  /** Every tools/call: the tool, whether the request declared the tasks extension, its `_meta`. */
  calls: Array<{ name: string; declaredTasks: boolean; meta: Record<string, unknown> }>;
  /** Every tasks/get and tasks/cancel as it arrived: method, task id, and the Mcp-Name header. */
  taskRequests: Array<{ method: string; taskId: string; mcpName: string | undefined }>;
  /** The task ids `tasks/cancel` named. */
  cancelled: string[];
  /** Each task's status, in the order they were created. */
  statuses(): string[];
  close(): Promise<void>;
}

/** How long `late-answer-job` holds back the answer that says it made a task. */
export const LATE_ANSWER_MS = 400;

const input = z.object({ text: z.string().optional() });

/** The tools: each one's work as a task (`undefined`: the tool never runs as a task). */
const TOOLS: Record<string, { description: string; task?: (text: string) => Partial<TaskRecord> | "never" }> = {
  "slow-report": {
    description: "A report that takes a while: a task when the client can take one.",
    task: (text) => ({ result: answer("slow-report", text) }),
  },
  "broken-job": {
    description: "A job whose task fails with a JSON-RPC error.",
    task: () => ({ error: { code: -32603, message: "the build farm is on fire" } }),
  },
  "refused-job": {
    description: "A job whose task completes with a tool error.",
    task: () => ({ result: { content: [{ type: "text", text: "permission denied for deploy" }], isError: true } }),
  },
  "endless-job": { description: "A job whose task never ends by itself.", task: () => "never" },
  "late-answer-job": {
    description: "A job whose task never ends, and whose server is slow to say it made one.",
    task: () => "never",
  },
  "asking-job": {
    description: "A job whose task waits for an answer from a person.",
    task: () => ({
      inputRequests: {
        confirm: {
          method: "elicitation/create",
          params: { mode: "form", message: "Deploy?", requestedSchema: { type: "object", properties: {} } },
        },
      },
    }),
  },
  echo: { description: "Answers at once, never as a task." },
};

function answer(name: string, text: string): ToolResult {
  return { content: [{ type: "text", text: `${name}: ${text}` }], structuredContent: { tool: name, text } };
}

export interface ExtensionTaskOptions {
  /** How long each task works (default `EXTENSION_TASK_WORK_MS`). */
  workMs?: number;
  /** `false` leaves the extension out of the server's capabilities. */
  offerTasks?: boolean;
  /** Adds a plain `records` tool answering what the server saw (for a server in another process). */
  withRecordsTool?: boolean;
}

/** The records a test reads, and the server factory for `createMcpHandler` or `serveStdio`. */
export type ExtensionTaskServerParts = Omit<ExtensionTaskServer, "url" | "close"> & {
  factory: (context: { era: "legacy" | "modern"; requestInfo?: Request }) => McpServer;
  dispose(): void;
};

/** The server's tools, its tasks and what it saw, for any transport. */
export function createExtensionTaskServer(options: ExtensionTaskOptions = {}): ExtensionTaskServerParts {
  const workMs = options.workMs ?? EXTENSION_TASK_WORK_MS;
  const offerTasks = options.offerTasks !== false;
  // createMcpHandler builds a server per request: the tasks outlive them, here.
  const tasks = new Map<string, TaskRecord>();
  const calls: ExtensionTaskServer["calls"] = [];
  const taskRequests: ExtensionTaskServer["taskRequests"] = [];
  const cancelled: string[] = [];

  const touch = (record: TaskRecord, patch: Partial<TaskRecord["task"]>) =>
    Object.assign(record.task, patch, { lastUpdatedAt: new Date().toISOString() });
  const startTask = (work: Partial<TaskRecord> | "never"): TaskRecord => {
    const now = new Date().toISOString();
    const record: TaskRecord = {
      task: {
        taskId: randomUUID(),
        status: "working",
        createdAt: now,
        lastUpdatedAt: now,
        ttlMs: 60_000,
        pollIntervalMs: 40,
      },
    };
    tasks.set(record.task.taskId, record);
    if (work === "never") return record;
    record.timer = setTimeout(() => {
      if (record.task.status !== "working") return;
      Object.assign(record, work);
      touch(record, { status: work.error ? "failed" : work.inputRequests ? "input_required" : "completed" });
    }, workMs);
    record.timer.unref();
    return record;
  };
  const detailed = (record: TaskRecord) => ({
    ...record.task,
    ...(record.task.status === "completed" ? { result: record.result } : {}),
    ...(record.task.status === "failed" ? { error: record.error } : {}),
    ...(record.task.status === "input_required" ? { inputRequests: record.inputRequests } : {}),
  });
  const find = (taskId: string) => {
    const record = tasks.get(taskId);
    if (!record) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown task: ${taskId}`);
    return record;
  };

  const statuses = () => [...tasks.values()].map((record) => record.task.status);
  const factory = ({ era, requestInfo }: { era: "legacy" | "modern"; requestInfo?: Request }) => {
    // One server per HTTP request: the header its client sent with it.
    const mcpName = requestInfo?.headers.get("mcp-name") ?? undefined;
    const server = new McpServer(
      { name: "builds", version: "2.0.0" },
      {
        capabilities: {
          tools: {},
          ...(era === "modern" && offerTasks ? { extensions: { [TASKS_EXTENSION]: {} } } : {}),
        },
      },
    );
    for (const [name, tool] of Object.entries(TOOLS)) {
      server.registerTool(name, { description: tool.description, inputSchema: input }, async ({ text }, context) => {
        const envelope = context.mcpReq.envelope as
          | Record<string, { extensions?: Record<string, unknown> }>
          | undefined;
        const declaredTasks = envelope?.[CLIENT_CAPABILITIES_META_KEY]?.extensions?.[TASKS_EXTENSION] !== undefined;
        calls.push({ name, declaredTasks, meta: { ...(context.mcpReq._meta as Record<string, unknown>) } });
        if (tool.task && declaredTasks) {
          const created = startTask(tool.task(text ?? ""));
          if (name === "late-answer-job") await new Promise((resolve) => setTimeout(resolve, LATE_ANSWER_MS));
          return { resultType: "task", ...created.task } as never;
        }
        if (name !== "slow-report" && name !== "echo") throw new Error(`${name} only runs as a task`);
        if (name === "slow-report") await new Promise((resolve) => setTimeout(resolve, workMs));
        return answer(name, text ?? "");
      });
    }
    if (era === "modern") {
      const byId = { params: z.object({ taskId: z.string() }) };
      server.server.setRequestHandler("tasks/get", byId, async ({ taskId }) => {
        taskRequests.push({ method: "tasks/get", taskId, mcpName });
        return detailed(find(taskId));
      });
      server.server.setRequestHandler("tasks/cancel", byId, async ({ taskId }) => {
        taskRequests.push({ method: "tasks/cancel", taskId, mcpName });
        cancelled.push(taskId);
        const record = find(taskId);
        if (record.task.status === "working" || record.task.status === "input_required") {
          clearTimeout(record.timer);
          touch(record, { status: "cancelled", statusMessage: "cancelled by the client" });
        }
        return {};
      });
    }
    if (options.withRecordsTool)
      server.registerTool("records", { description: "What the server saw." }, async () => ({
        content: [],
        structuredContent: { calls, taskRequests, cancelled, statuses: statuses() },
      }));
    return server;
  };
  const dispose = () => {
    for (const record of tasks.values()) clearTimeout(record.timer);
  };
  return { factory, calls, taskRequests, cancelled, statuses, dispose };
}

/** Starts the server over Streamable HTTP on 127.0.0.1 (a free port). */
export async function startExtensionTaskServer(options: ExtensionTaskOptions = {}): Promise<ExtensionTaskServer> {
  const { factory, dispose, ...records } = createExtensionTaskServer(options);
  const handler = createMcpHandler(factory);
  const nodeHandler = toNodeHandler(handler);
  const http: HttpServer = createServer((request, response) => void nodeHandler(request, response));
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: new URL(`http://127.0.0.1:${port}/mcp`),
    ...records,
    async close() {
      dispose();
      await handler.close();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
