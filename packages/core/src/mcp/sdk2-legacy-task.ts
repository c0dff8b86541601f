// The 2025-11-25 tasks (SEP-1686) through an SDK 2 client, which has no `experimental.tasks`: the
// same requests SDK 1's `callToolStream` sends, with the connector's own result schemas.

import { anyObject, type McpClientSdk2, objectOf, requestOptions, type Sdk2RequestOptions } from "./sdk2-client.js";
import { deadlineError, pause, pollIntervalOf, taskDeadline, type UpstreamTaskOptions } from "./task-deadline.js";
import { unwrapToolResult } from "./unwrap-tool-result.js";

/**
 * Whether an SDK 2 client on a 2025-11-25 connection calls the tool as a task: as with SDK 1, the
 * server declares task-augmented `tools/call` and the tool's `execution.taskSupport` is "optional"
 * or "required".
 */
export function runsAsLegacyTask(client: McpClientSdk2, tool: { execution?: { taskSupport?: string } }): boolean {
  const support = tool.execution?.taskSupport;
  if (support !== "optional" && support !== "required") return false;
  if (client.getProtocolEra() === "modern") return false;
  const tasks = objectOf(objectOf(client.getServerCapabilities())?.tasks);
  return objectOf(objectOf(tasks?.requests)?.tools)?.call !== undefined;
}

/** The states after which polling stops: `tasks/result` takes over (it waits through `input_required`). */
const ENDS = new Set(["completed", "failed", "cancelled", "input_required"]);

type CallParams = { name: string; arguments: Record<string, unknown>; _meta: Record<string, unknown> };
type Task = { taskId: string; status?: unknown; statusMessage?: unknown; pollInterval?: unknown };

/**
 * Calls a tool as a 2025-11-25 task through an SDK 2 client and awaits its end, with the bounds and
 * the messages of SDK 1's path (upstream-task.ts): `tools/call` with `task: { ttl }` creates it,
 * `tasks/get` polls it, `tasks/result` fetches the result; at the deadline it is cancelled
 * upstream (`tasks/cancel`) and the call rejects.
 *
 * @example
 * const result = await callLegacyTaskWithSdk2(client, params, "ci.build", { taskTimeoutMs: 600_000 });
 */
export async function callLegacyTaskWithSdk2(
  client: McpClientSdk2,
  params: CallParams,
  label: string,
  options: UpstreamTaskOptions,
): Promise<unknown> {
  const deadline = taskDeadline(label, options);
  const perRequest = (signal?: AbortSignal) => requestOptions(options.timeoutMs, signal);
  let task: Task | undefined;
  try {
    const created = (await client.request(
      // The server may drop the task's record once nobody is waiting for it any more.
      { method: "tools/call", params: { ...params, task: { ttl: options.taskTimeoutMs } } },
      anyObject,
      perRequest(deadline.signal),
    )) as Record<string, unknown>;
    const seed = objectOf(created.task);
    // A server may run the call plainly after all: its answer is the result.
    if (!seed) return unwrapToolResult(created, label);
    if (typeof seed.taskId !== "string") throw new Error(`${label}: the server created a task without a taskId`);
    task = seed as Task;
    while (!ENDS.has(String(task.status))) {
      await pause(pollIntervalOf(task.pollInterval), deadline.signal);
      deadline.signal.throwIfAborted();
      task = { ...((await get(client, "tasks/get", task.taskId, perRequest(deadline.signal))) as Task) };
    }
    return await ended(client, task, label, perRequest(deadline.signal));
  } catch (error) {
    // Whatever ended the wait (the deadline, a poll that failed), the task must not go on upstream unseen.
    const unfinished = task !== undefined && !ENDS.has(String(task.status));
    if (unfinished) await get(client, "tasks/cancel", (task as Task).taskId, perRequest()).catch(() => undefined);
    if (!deadline.signal.aborted) throw error;
    throw deadlineError(deadline.signal, error);
  } finally {
    deadline.dispose();
  }
}

/**
 * The call's outcome once the task left `working`. `tasks/result` waits for the end: on
 * `input_required` it also carries the server's questions to the client's own handlers, as SDK 1
 * does. A failed task's stored result usually carries the reason.
 */
async function ended(client: McpClientSdk2, task: Task, label: string, options: Sdk2RequestOptions): Promise<unknown> {
  const said = typeof task.statusMessage === "string" && task.statusMessage ? `: ${task.statusMessage}` : "";
  if (task.status === "completed" || task.status === "input_required")
    return unwrapToolResult(await get(client, "tasks/result", task.taskId, options), label);
  if (task.status === "cancelled") throw new Error(`${label}: the upstream task was cancelled${said}`);
  try {
    unwrapToolResult(await get(client, "tasks/result", task.taskId, options), label);
  } catch (reason) {
    if (reason instanceof Error && typeof (reason as { code?: unknown }).code === "undefined") throw reason;
  }
  throw new Error(`${label}: the upstream task failed${said}`);
}

function get(client: McpClientSdk2, method: string, taskId: string, options: Sdk2RequestOptions): Promise<unknown> {
  return client.request({ method, params: { taskId } }, anyObject, options);
}
