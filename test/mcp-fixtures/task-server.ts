/**
 * A low-level SDK `Server` that runs tools as MCP tasks (an InMemoryTaskStore, the tasks
 * capability for tools/call), for the tests of mcpConnector calling long upstream tools as tasks.
 */
import type { CodemodeRuntime } from "@codemode/core";
import { IDEMPOTENCY_KEY_META } from "@codemode/core/mcp";
import { InMemoryTaskStore } from "@modelcontextprotocol/sdk/experimental/tasks";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  type CallToolResult,
  ListToolsRequestSchema,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import { expect } from "vitest";

export interface TaskServer {
  server: Server;
  /** Every tools/call the server received: tool name, whether as a task, and `_meta`. */
  calls: Array<{ name: string; asTask: boolean; meta: unknown }>;
  /** The status of each task the server created, by task id, read from its task store. */
  taskStatuses(): Promise<string[]>;
}

/** How long each task-run tool works before its task ends. */
export const TASK_WORK_MS = 300;

const input = { type: "object" as const, properties: { text: { type: "string" } } };

/** The tools: a long report (task optional), a required-task job, a failing job, and a plain echo. */
export const taskTools: Tool[] = [
  { name: "slow-report", inputSchema: input, execution: { taskSupport: "optional" } },
  { name: "required-job", inputSchema: input, execution: { taskSupport: "required" } },
  { name: "broken-job", inputSchema: input, execution: { taskSupport: "optional" } },
  { name: "echo", inputSchema: input },
];

function answer(name: string, text: string): CallToolResult {
  if (name === "broken-job") return { content: [{ type: "text", text: "the build farm is on fire" }], isError: true };
  return { content: [{ type: "text", text: `${name}: ${text}` }], structuredContent: { tool: name, text } };
}

/** `withTasks: false` leaves the tasks capability out, as a server that does not support them. */
/** `workMs`: how long a task's work takes (default `TASK_WORK_MS`). */
export function createTaskServer(options: { withTasks?: boolean; workMs?: number } = {}): TaskServer {
  const withTasks = options.withTasks !== false;
  const calls: TaskServer["calls"] = [];
  const taskStore = new InMemoryTaskStore();
  const taskIds: string[] = [];
  const server = new Server(
    { name: "jobs", version: "1.0.0" },
    {
      capabilities: withTasks
        ? { tools: {}, tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } }
        : { tools: {} },
      ...(withTasks ? { taskStore } : {}),
    },
  );
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: taskTools }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const { name, task } = request.params;
    const text = String(request.params.arguments?.text ?? "");
    calls.push({ name, asTask: task !== undefined, meta: request.params._meta });
    if (!task || !extra.taskStore) return answer(name, text);
    const created = await extra.taskStore.createTask({ ttl: task.ttl ?? null, pollInterval: 50 });
    const store = extra.taskStore;
    taskIds.push(created.taskId);
    const working = setTimeout(() => {
      const result = answer(name, text);
      // A task cancelled meanwhile refuses a result; nothing is waiting for it.
      store.storeTaskResult(created.taskId, result.isError ? "failed" : "completed", result).catch(() => undefined);
    }, options.workMs ?? TASK_WORK_MS);
    // Work nobody waits for any more (a cancelled task) does not keep the test process alive.
    working.unref();
    return { task: created };
  });
  const taskStatuses = async () =>
    Promise.all(taskIds.map(async (taskId) => (await taskStore.getTask(taskId))?.status ?? "gone"));
  return { server, calls, taskStatuses };
}

/**
 * The story both clients tell (SDK 1 and SDK 2): `jobs.slow_report` outlasts the per-request
 * timeout, runs as a task, and the program gets its result; the one call carried the idempotency key.
 */
export async function expectSlowReportAsTask(runtime: CodemodeRuntime, calls: TaskServer["calls"]): Promise<void> {
  const started = Date.now();
  const outcome = await runtime.execute({ code: `async () => jobs.slow_report({ text: "quarterly" })` });
  expect(outcome).toMatchObject({ status: "completed", result: { tool: "slow-report", text: "quarterly" } });
  expect(Date.now() - started).toBeGreaterThanOrEqual(TASK_WORK_MS - 20);
  expect(calls).toEqual([
    {
      name: "slow-report",
      asTask: true,
      meta: expect.objectContaining({ [IDEMPOTENCY_KEY_META]: `${outcome.executionId}:0` }),
    },
  ]);
}
