import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { CallToolResultSchema, type Task, type Tool } from "@modelcontextprotocol/sdk/types.js";
import { taskDeadline, type UpstreamTaskOptions } from "./task-deadline.js";
import { unwrapToolResult } from "./unwrap-tool-result.js";

/** The parts of an SDK `Client` that calling a tool as a task needs; a client without them calls as today. */
export type McpTaskClient = Partial<Pick<Client, "getServerCapabilities" | "experimental">>;

/**
 * Whether a tool is called as an upstream task: the server declares task-augmented `tools/call`
 * (`capabilities.tasks.requests.tools.call`) and the tool's `execution.taskSupport` is "optional"
 * or "required". A plain `tools/call` would be cut by the per-request timeout; a task is polled.
 */
export function runsAsTask(client: McpTaskClient, tool: Tool): boolean {
  const support = tool.execution?.taskSupport;
  if (support !== "optional" && support !== "required") return false;
  if (typeof client.experimental?.tasks?.callToolStream !== "function") return false;
  const capabilities = client.getServerCapabilities?.();
  return capabilities?.tasks?.requests?.tools?.call !== undefined;
}

/**
 * Calls a tool as an upstream task and awaits its end: `tools/call` creates the task, `tasks/get`
 * is polled at the server's `pollInterval`, and the result is unwrapped like a plain call's. Each
 * request gets the per-request timeout, so a long task is not cut by it; the whole wait is bounded
 * by `taskTimeoutMs` and by the calling pass's own deadline, whichever comes first, and ends when
 * the run is cancelled; then the task is cancelled upstream (best effort) and the call rejects. A task that ends failed or cancelled, or with an `isError` result, rejects the call.
 *
 * @example
 * const result = await callToolAsTask(client, { name: "build", arguments: {} }, "ci.build", { taskTimeoutMs: 600_000 });
 */
export async function callToolAsTask(
  client: McpTaskClient,
  params: { name: string; arguments: Record<string, unknown>; _meta: Record<string, unknown> },
  label: string,
  options: UpstreamTaskOptions,
): Promise<unknown> {
  const tasks = client.experimental!.tasks;
  const deadline = taskDeadline(label, options);
  let last: Task | undefined;
  try {
    const stream = tasks.callToolStream(params, CallToolResultSchema, {
      // The server may drop the task's record once nobody is waiting for it any more.
      task: { ttl: options.taskTimeoutMs },
      signal: deadline.signal,
      ...(options.timeoutMs === undefined ? {} : { timeout: options.timeoutMs }),
    });
    for await (const message of stream) {
      if (message.type === "taskCreated" || message.type === "taskStatus") last = message.task;
      else if (message.type === "result") return unwrapToolResult(message.result, label);
      else if (message.type === "error") throw await taskError(client, label, last, message.error, deadline.signal);
    }
    throw new Error(`${label}: the upstream task ended without a result`);
  } finally {
    deadline.dispose();
  }
}

/** The error a task's end becomes: the failed task's own message where the server kept one. */
async function taskError(
  client: McpTaskClient,
  label: string,
  task: Task | undefined,
  error: Error,
  deadline: AbortSignal,
): Promise<Error> {
  const said = task?.statusMessage ? `: ${task.statusMessage}` : "";
  if (deadline.aborted) {
    if (task) await client.experimental?.tasks.cancelTask(task.taskId).catch(() => undefined);
    return deadline.reason instanceof Error ? deadline.reason : error;
  }
  if (task?.status === "cancelled") return new Error(`${label}: the upstream task was cancelled${said}`);
  if (task?.status !== "failed") return error;
  // A failed task's stored result is usually an isError tool result carrying the reason.
  try {
    const result = await client.experimental!.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    unwrapToolResult(result, label);
  } catch (reason) {
    if (reason instanceof Error && !isProtocolError(reason)) return reason;
  }
  return new Error(`${label}: the upstream task failed${said}`);
}

/** Errors of the request itself (no stored result, lost connection), not the tool's own failure. */
function isProtocolError(error: Error): boolean {
  return typeof (error as { code?: unknown }).code === "number";
}
