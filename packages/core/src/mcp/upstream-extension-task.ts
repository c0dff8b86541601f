import { TASKS_EXTENSION } from "./protocol-names.js";
import { anyObject, type McpClientSdk2, objectOf, requestOptions, type Sdk2RequestOptions } from "./sdk2-client.js";
import { deadlineError, pause, pollIntervalOf, taskDeadline, type UpstreamTaskOptions } from "./task-deadline.js";
import { expectTaskAnswer } from "./task-result-hook.js";
import { unwrapToolResult } from "./unwrap-tool-result.js";

/** Whether the server of a 2026-07-28 connection offers the tasks extension (in its `server/discover` capabilities). */
export function offersExtensionTasks(client: McpClientSdk2): boolean {
  if (client.getProtocolEra() !== "modern") return false;
  const extensions = objectOf(objectOf(client.getServerCapabilities())?.extensions);
  return extensions?.[TASKS_EXTENSION] !== undefined;
}

type CallParams = { name: string; arguments: Record<string, unknown>; _meta: Record<string, unknown> };

/**
 * Calls a tool on a 2026-07-28 server that offers the tasks extension (SEP-2663): the call declares
 * the extension, and the server decides. A plain answer is the result; a task (`resultType:
 * "task"`) is polled with `tasks/get` at its `pollIntervalMs` until it is completed (its `result`
 * is unwrapped like a plain call's), failed (rejects with its `error`) or cancelled. The wait has
 * the bounds of any upstream task (`taskTimeoutMs`, the pass's deadline, the run's cancellation);
 * when it ends first, the task is cancelled upstream with `tasks/cancel` and the call rejects at
 * once; a task whose answer was still on its way is cancelled when that answer arrives (within
 * the per-request timeout). A task that asks for input (`input_required`) is cancelled too: a
 * program's call has no one to ask, and it would only wait out its time.
 *
 * @example
 * const result = await callToolWithExtensionTasks(client, tool, params, "ci.build", { taskTimeoutMs: 600_000 });
 */
export async function callToolWithExtensionTasks(
  client: McpClientSdk2,
  tool: object,
  params: CallParams,
  label: string,
  options: UpstreamTaskOptions,
): Promise<unknown> {
  const call = expectTaskAnswer(client);
  const deadline = taskDeadline(label, options);
  const perRequest = (signal?: AbortSignal) => requestOptions(options.timeoutMs, signal);
  // Not aborted with the wait: an aborted request loses its answer, and with it the task to cancel.
  const answering = client
    .callTool({ ...params, _meta: { ...params._meta, ...call?.meta } }, { ...perRequest(), toolDefinition: tool })
    .then(
      (answer) => ({ answer }),
      (error: unknown) => ({ error }),
    );
  let answered: Awaited<typeof answering> | undefined;
  try {
    answered = await untilAborted(answering, deadline.signal);
    if (!answered) throw deadlineError(deadline.signal, new Error(`${label}: the wait for the upstream task ended`));
    if ("error" in answered) throw answered.error;
    const task = call?.task();
    if (!task) return unwrapToolResult(answered.answer, label);
    return await awaitTask(client, task, label, deadline.signal, perRequest);
  } finally {
    deadline.dispose();
    if (answered) call?.end();
    // The wait ended before the answer: a task the answer still brings is cancelled, not left running.
    else
      void answering.then(async () => {
        const late = call?.task();
        call?.end();
        if (typeof late?.taskId === "string") await cancelTask(client, late.taskId, perRequest());
      });
  }
}

/** `promise`'s value, or undefined as soon as `signal` aborts (the promise goes on by itself). */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T | undefined> {
  if (signal.aborted) return Promise.resolve(undefined);
  return new Promise((resolve) => {
    const aborted = () => resolve(undefined);
    signal.addEventListener("abort", aborted, { once: true });
    void promise.then((value) => {
      signal.removeEventListener("abort", aborted);
      resolve(value);
    });
  });
}

/** Polls the task to its end; at the deadline, cancels it upstream and rejects with the reason. */
async function awaitTask(
  client: McpClientSdk2,
  created: Record<string, unknown>,
  label: string,
  deadline: AbortSignal,
  perRequest: (signal?: AbortSignal) => Sdk2RequestOptions,
): Promise<unknown> {
  const taskId = created.taskId;
  if (typeof taskId !== "string") throw new Error(`${label}: the server answered with a task without a taskId`);
  let task = created;
  for (;;) {
    const end = taskEnd(task, label);
    if (end.done) {
      if (end.cancelUpstream) await cancelTask(client, taskId, perRequest());
      if (end.error) throw end.error;
      return unwrapToolResult(task.result, label);
    }
    await pause(pollIntervalOf(task.pollIntervalMs), deadline);
    if (!deadline.aborted) {
      try {
        task = (await client.request(
          { method: "tasks/get", params: { taskId } },
          anyObject,
          perRequest(deadline),
        )) as Record<string, unknown>;
        continue;
      } catch (error) {
        // A poll that failed ends the call: the task must not go on upstream unseen.
        if (!deadline.aborted) {
          await cancelTask(client, taskId, perRequest());
          throw error;
        }
      }
    }
    await cancelTask(client, taskId, perRequest());
    throw deadlineError(deadline, new Error(`${label}: the wait for the upstream task ended`));
  }
}

type TaskEnd = { done: false } | { done: true; error?: Error; cancelUpstream?: boolean };

/** What a task's state means for the call: go on polling, or end with its result or an error. */
function taskEnd(task: Record<string, unknown>, label: string): TaskEnd {
  const said = typeof task.statusMessage === "string" && task.statusMessage ? `: ${task.statusMessage}` : "";
  switch (task.status) {
    case "completed":
      return { done: true };
    case "failed": {
      const reason = objectOf(task.error)?.message;
      const why = typeof reason === "string" && reason ? `: ${reason}` : said;
      return { done: true, error: new Error(`${label}: the upstream task failed${why}`) };
    }
    case "cancelled":
      return { done: true, error: new Error(`${label}: the upstream task was cancelled${said}`) };
    case "input_required": {
      // Its questions are for a person the connector cannot reach; waiting would only run out the time.
      const asked = Object.keys(objectOf(task.inputRequests) ?? {}).join(", ");
      return {
        done: true,
        cancelUpstream: true,
        error: new Error(
          `${label}: the upstream task asked for input${asked ? ` (${asked})` : ""}, which a Code Mode connector cannot give; it was cancelled`,
        ),
      };
    }
    default:
      return { done: false };
  }
}

/** `tasks/cancel`, best effort: the call rejects with its own reason either way. */
async function cancelTask(client: McpClientSdk2, taskId: string, options: Sdk2RequestOptions): Promise<void> {
  await client.request({ method: "tasks/cancel", params: { taskId } }, anyObject, options).catch(() => undefined);
}
