/**
 * A client of the 2026-07-28 protocol (MCP SDK 2) that takes tasks of the tasks extension
 * (SEP-2663): the SDK 2.4 client refuses a `resultType: "task"` answer, so its transport hands
 * such an answer on marked as a task. Helpers read a task, answer its questions and wait for it.
 */
import { Client } from "@modelcontextprotocol/client";
import * as z from "zod";

import { TASKS_EXTENSION } from "./extension-task-server.ts";

const IS_TASK = "test/is-task";

type Message = { result?: Record<string, unknown> } & Record<string, unknown>;
type Transport = { onmessage?: ((message: Message, extra?: unknown) => void) | undefined };

/** The transport, with each task answer passed to the client as a result marked `IS_TASK`. */
export function acceptTaskResults<T extends object>(transport: T): T {
  return new Proxy(transport, {
    set(target, property, value) {
      if (property === "onmessage" && typeof value === "function") {
        (target as Transport).onmessage = (message, extra) => {
          const result = message?.result;
          const handed =
            result?.resultType === "task"
              ? {
                  ...message,
                  result: {
                    ...result,
                    content: result.content ?? [],
                    resultType: "complete",
                    _meta: { ...(result._meta as object), [IS_TASK]: true },
                  },
                }
              : message;
          value(handed, extra);
        };
        return true;
      }
      return Reflect.set(target, property, value);
    },
  });
}

/**
 * A 2026-07-28 client named `name` that declares the tasks extension (unless `tasks` is false),
 * and form elicitation when it may `decide` (a server that trusts clients with approvals then asks it).
 */
export async function modernClient(transport: object, name: string, decide: boolean, tasks = true): Promise<Client> {
  const client = new Client(
    { name, version: "1.0.0" },
    {
      versionNegotiation: { mode: { pin: "2026-07-28" } },
      capabilities: {
        ...(tasks ? { extensions: { [TASKS_EXTENSION]: {} } } : {}),
        ...(decide ? { elicitation: { form: {} } } : {}),
      },
    },
  );
  await client.connect(acceptTaskResults(transport) as never);
  return client;
}

export const TaskSchema = z.looseObject({
  taskId: z.string(),
  status: z.enum(["working", "input_required", "completed", "failed", "cancelled"]),
  statusMessage: z.string().optional(),
  inputRequests: z.record(z.string(), z.looseObject({ method: z.string(), params: z.looseObject({}) })).optional(),
  result: z.looseObject({}).optional(),
});
export type ModernTask = z.infer<typeof TaskSchema>;

/** `execute` as a task: the created task (its answer must be one). */
export async function executeAsTask(client: Client, code: string): Promise<ModernTask> {
  const answer = await client.request(
    { method: "tools/call", params: { name: "execute", arguments: { code } } },
    z.looseObject({ _meta: z.looseObject({}).optional() }),
  );
  if (answer._meta?.[IS_TASK] !== true) throw new Error(`not a task: ${JSON.stringify(answer)}`);
  return TaskSchema.parse(answer);
}

export async function getTask(client: Client, taskId: string): Promise<ModernTask> {
  return await client.request({ method: "tasks/get", params: { taskId } } as never, TaskSchema);
}

export async function updateTask(client: Client, taskId: string, inputResponses: Record<string, unknown>) {
  return await client.request(
    { method: "tasks/update", params: { taskId, inputResponses } } as never,
    z.looseObject({}),
  );
}

/** Polls `tasks/get` until the task's status is one of `statuses`. */
export async function waitForTask(
  client: Client,
  taskId: string,
  statuses: ReadonlyArray<ModernTask["status"]>,
  timeoutMs = 20_000,
): Promise<ModernTask> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const task = await getTask(client, taskId);
    if (statuses.includes(task.status)) return task;
    if (Date.now() > until) throw new Error(`task ${taskId} is still ${task.status}: ${JSON.stringify(task)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
