import {
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  createMcpHandler,
  LOG_LEVEL_META_KEY,
  type McpHttpHandler,
  ProtocolError,
  ProtocolErrorCode,
  Server,
  type ServerContext,
  type StandardSchemaV1,
} from "@modelcontextprotocol/server";
import type { DecisionOutcome } from "../adapters/decide-pending-action.js";
import { errorOutcome } from "../outcome.js";
import type { CodemodeRuntime } from "../runtime/handle/index.js";
import { answerInsideCall, askInsideCall } from "./ask-inside-call.js";
import { takesFormElicitation } from "./elicit-approval.js";
import { executeWithProgress, type ProgressNote } from "./progress.js";
import { TASKS_EXTENSION } from "./protocol-names.js";
import { atLeast, isLogLevel, runLogMessage } from "./run-log.js";
import {
  extensionTask,
  readTask,
  signedTaskId,
  TaskRequestError,
  updateExtensionTask,
} from "./serve-tasks-extension.js";
import { answerToolCall, clientClaim, outcomeResult, type ServerToolSettings } from "./server-tools.js";
import { toolList } from "./tool-list.js";

/** What a server of the 2026-07-28 protocol is made of: the same runtime and settings as the 2025 one. */
export interface ModernServerSetup {
  runtime: CodemodeRuntime;
  settings: ServerToolSettings;
  serverInfo: { name: string; version: string };
  instructions: string;
}

type TaskSettings = NonNullable<ServerToolSettings["tasks"]>;
type Envelope = Record<string, unknown> | undefined;

/**
 * A server for one request (or one stdio connection) of the 2026-07-28 protocol: no
 * `initialize` and no session, every request carries who the client is and what it can do. It
 * serves the same tools as the 2025 server, and `execute` as a task of the tasks extension
 * (SEP-2663) to a client that declares it: a pause is `input_required` with an approval form for
 * a client allowed to decide, answered with `tasks/update`; `tasks/get` and `tasks/cancel` work
 * from any server process over the same store, since a task is its execution.
 */
export function createModernServer(setup: ModernServerSetup): Server {
  const { runtime, settings } = setup;
  const tasks = settings.tasks;
  const server = new Server(setup.serverInfo, {
    capabilities: {
      tools: { listChanged: false },
      logging: {},
      ...(tasks ? { extensions: { [TASKS_EXTENSION]: {} } } : {}),
    },
    instructions: setup.instructions,
  });
  server.setRequestHandler("tools/list", () => ({ tools: toolList(runtime, settings) as never }));
  server.setRequestHandler("tools/call", async (request, context) => {
    const { name } = request.params;
    const envelope = context.mcpReq.envelope as Envelope;
    const client = clientClaim(clientInfoOf(envelope)?.name);
    const answered = await answerToolCall(runtime, settings, name, request.params.arguments ?? {}, {
      client,
      isProtocolError: (error) => error instanceof ProtocolError,
      answerOutcome: async (outcome) => outcomeResult(outcome, settings),
      async execute(run) {
        const who = asker(settings, envelope);
        // A retry of a call that was asked for input: its answers, then the run as it now stands.
        // It never runs the code again, whoever sends it.
        const state = context.mcpReq.requestState<unknown>();
        if (state !== undefined) {
          if (!who.mayDecide || typeof state !== "string") return outcomeResult(refusedRetry(who.mayDecide), settings);
          const responses = (context.mcpReq.inputResponses ?? {}) as Record<string, unknown>;
          const by = `input_required answered in ${who.by}`;
          return await askInsideCall(
            runtime,
            settings,
            await answerInsideCall(runtime, state, run.code, responses, by),
          );
        }
        if (tasks && declaresTasks(envelope)) return await startTask(runtime, run, settings, tasks, who);
        const notes = runNotes(request.params._meta, context);
        const outcome: DecisionOutcome = notes
          ? await executeWithProgress(runtime, run, { send: notes })
          : await runtime.execute(run);
        return who.mayDecide ? await askInsideCall(runtime, settings, { outcome }) : outcomeResult(outcome, settings);
      },
    });
    if (answered === undefined) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Tool ${name} not found`);
    return answered as never;
  });
  if (tasks) registerTaskMethods(server, runtime, { ...settings, tasks });
  return server;
}

/** A retried call whose request state this client may not bring back (or that is not one at all): nothing runs. */
function refusedRetry(mayDecide: boolean) {
  return errorOutcome(
    "",
    "NOT_FOUND",
    mayDecide
      ? "The request state is not one this server made: nothing ran and nothing was decided."
      : "This client may not decide approvals, so it has no answer to bring back: nothing ran and nothing was decided.",
  );
}

/** `tasks/get`, `tasks/update` and `tasks/cancel` of the tasks extension, over the runtime's store. */
function registerTaskMethods(
  server: Server,
  runtime: CodemodeRuntime,
  settings: ServerToolSettings & { tasks: TaskSettings },
): void {
  const byTaskId = { params: taskIdParams() };
  server.setRequestHandler("tasks/get", byTaskId, async ({ taskId }, context) => {
    const task = await protocolErrors(() =>
      extensionTask(runtime, taskId, settings, asker(settings, context.mcpReq.envelope as Envelope)),
    );
    if (!task) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Task not found: ${taskId}`);
    return task as never;
  });
  server.setRequestHandler("tasks/update", byTaskId, async ({ taskId }, context) => {
    // The SDK lifts `inputResponses` out of the params into the request's context.
    const responses = (context.mcpReq.inputResponses ?? {}) as Record<string, unknown>;
    await protocolErrors(() =>
      updateExtensionTask(runtime, taskId, responses, asker(settings, context.mcpReq.envelope as Envelope)),
    );
    return {} as never;
  });
  server.setRequestHandler("tasks/cancel", byTaskId, async ({ taskId }) => {
    const report = await runtime.cancel({
      executionId: (await readTask(runtime, taskId)).executionId,
      by: "MCP client (tasks/cancel)",
      reason: "The MCP client cancelled the task.",
    });
    if (report.result === "not_found")
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Task not found: ${taskId}`);
    // Cancelling a task that has ended is no error in the extension: it stays as it ended.
    return {} as never;
  });
}

/**
 * `execute` as a task: the code is stored, its run starts in this process without being awaited,
 * and the task (id = execution id) is answered at once, or after `afterMs` when the run ends
 * sooner; it exists in the store before the answer goes, as the extension requires.
 */
async function startTask(
  runtime: CodemodeRuntime,
  program: { code: string; by: string },
  settings: ServerToolSettings,
  tasks: TaskSettings,
  who: { mayDecide: boolean },
) {
  const submitted = await runtime.submit(program);
  if ("status" in submitted) throw new ProtocolError(ProtocolErrorCode.InvalidParams, submitted.error);
  const { executionId } = submitted;
  const run = runtime.recover({ executionId }).catch(() => []);
  if (tasks.afterMs > 0) {
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([run, new Promise((resolve) => (timer = setTimeout(resolve, tasks.afterMs)))]);
    clearTimeout(timer);
  }
  const taskId = signedTaskId(runtime, executionId, program.code);
  const task = await extensionTask(runtime, taskId, { ...settings, tasks }, who);
  if (!task) throw new ProtocolError(ProtocolErrorCode.InternalError, `Execution ${executionId} is gone`);
  // A created task carries no result or questions: tasks/get gives them.
  const { result: _result, inputRequests: _questions, ...created } = task;
  return { resultType: "task", ...created };
}

/**
 * Where a plain `execute`'s run notes go: progress for a client that sent a token, log messages
 * at and above the level the request asks (`io.modelcontextprotocol/logLevel`). Undefined when
 * neither is asked, so the run goes without reading its own progress.
 */
function runNotes(
  meta: Record<string, unknown> | undefined,
  context: ServerContext,
): ((note: ProgressNote) => Promise<void>) | undefined {
  const token = meta?.progressToken;
  // The SDK lifts the envelope's keys (the log level among them) out of `_meta`.
  const level = (context.mcpReq.envelope as Envelope)?.[LOG_LEVEL_META_KEY] ?? meta?.[LOG_LEVEL_META_KEY];
  const progressToken = typeof token === "string" || typeof token === "number" ? token : undefined;
  const threshold = isLogLevel(level) ? level : undefined;
  if (progressToken === undefined && threshold === undefined) return undefined;
  return async (note) => {
    if (progressToken !== undefined)
      await context.mcpReq.notify({ method: "notifications/progress", params: { progressToken, ...note } });
    const message = runLogMessage(note.message);
    if (threshold !== undefined && atLeast(message.level, threshold))
      await context.mcpReq.notify({ method: "notifications/message", params: { ...message } });
  };
}

/** Whether this request's client declares the tasks extension (it must, to be answered a task). */
function declaresTasks(envelope: Envelope): boolean {
  const capabilities = envelope?.[CLIENT_CAPABILITIES_META_KEY] as { extensions?: Record<string, unknown> } | undefined;
  return capabilities?.extensions?.[TASKS_EXTENSION] !== undefined;
}

/**
 * Who asks about a task, from this request's envelope: allowed to decide when the server trusts
 * clients with approvals (`elicitApproval`) and this one takes form elicitation.
 */
function asker(settings: ServerToolSettings, envelope: Envelope): { mayDecide: boolean; by: string } {
  const capabilities = envelope?.[CLIENT_CAPABILITIES_META_KEY] as { elicitation?: object } | undefined;
  return {
    mayDecide: settings.elicitApproval && takesFormElicitation(capabilities?.elicitation),
    by: `an MCP client that calls itself ${clientClaim(clientInfoOf(envelope)?.name)}`,
  };
}

function clientInfoOf(envelope: Envelope): { name?: unknown } | undefined {
  const info = envelope?.[CLIENT_INFO_META_KEY];
  return typeof info === "object" && info !== null ? (info as { name?: unknown }) : undefined;
}

/** A task request's failure the client caused, as invalid params; a store failure as an internal error. */
async function protocolErrors<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof TaskRequestError) throw new ProtocolError(ProtocolErrorCode.InvalidParams, error.message);
    throw error;
  }
}

/** `{ taskId: string }`, checked, as the SDK's custom-method handlers take their params (Standard Schema). */
function taskIdParams(): StandardSchemaV1<unknown, { taskId: string }> {
  return {
    "~standard": {
      version: 1,
      vendor: "codemode",
      validate(value) {
        const taskId = (value as { taskId?: unknown } | null)?.taskId;
        if (typeof value === "object" && value !== null && typeof taskId === "string" && taskId.length <= 200)
          return { value: { taskId } };
        return { issues: [{ message: "params.taskId must be a task id (a string)" }] };
      },
    },
  };
}

/** The 2026-07-28 protocol over HTTP: one server per request, 2025 requests refused (the listener routes them elsewhere). */
export function createModernHttpHandler(setup: ModernServerSetup): McpHttpHandler {
  return createMcpHandler(() => createModernServer(setup), { legacy: "reject" });
}
