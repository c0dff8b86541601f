import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { RequestTaskStore } from "@modelcontextprotocol/sdk/shared/protocol.js";
import {
  CallToolRequestSchema,
  type CallToolResult,
  type CreateTaskResult,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  SetLevelRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import {
  type DecisionOutcome,
  decidePendingAction,
  decidePendingActions,
  modelFacingDecision,
} from "../adapters/decide-pending-action.js";
import type { ModelOutputOptions } from "../adapters/model-output.js";
import { toModelJson } from "../adapters/pending-approval.js";
import { createArgsValidator } from "../connectors/validate-args.js";
import { errorMessage } from "../error-message.js";
import type { CodemodeRuntime } from "../runtime/handle/index.js";
import type { Decision } from "../runtime/operations/index.js";
import { askForApprovals, canElicit } from "./elicit-approval.js";
import { modelToolNamed } from "./model-tools.js";
import { executeWithProgress, type ProgressNote } from "./progress.js";
import type { ProgressFollowers } from "./progress-followers.js";
import { atLeast, type LogLevel, runLogMessage } from "./run-log.js";
import * as schemas from "./server-schemas.js";
import { toolList } from "./tool-list.js";

/** How the tools of one Code Mode MCP server behave (see `CodemodeMcpServerOptions`). */
export interface ServerToolSettings {
  operatorTools: boolean;
  elicitApproval: boolean;
  elicitationTimeoutMs: number;
  modelOutput: ModelOutputOptions;
  /** MCP tasks for `execute`, when served (see `CodemodeMcpServerOptions.tasks`). */
  tasks?: TaskSettings;
}

/** How `execute` answers a client that asks for a task. */
export interface TaskSettings {
  /** How long to wait for the run before answering the task, so a quick run's task has already ended. */
  afterMs: number;
  ttlMs: number;
  pollIntervalMs: number;
  /** Who reports a task's progress while it goes on, bounded over the whole server. */
  followers: ProgressFollowers;
}

type Args = Record<string, unknown>;

/** A tool's input the caller got wrong: an `isError` result, not a protocol error. */
class ToolInputError extends Error {}

/**
 * Registers `tools/list` and `tools/call` on one SDK server: `search`, `describe` and `execute`
 * for agents, and with `operatorTools` `pending`, `approve`, `reject` and `decide` for operators.
 */
export function registerCodemodeTools(server: Server, runtime: CodemodeRuntime, settings: ServerToolSettings): void {
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: toolList(runtime, settings) }));
  // The level this connection asked for: its runs' notes are sent as log messages from it up.
  // Nothing is logged to a client that never asked (it would see every console line twice).
  let logLevel: LogLevel | undefined;
  server.setRequestHandler(SetLevelRequestSchema, (request) => {
    logLevel = request.params.level;
    return {};
  });
  server.setRequestHandler(
    CallToolRequestSchema,
    async (request, extra): Promise<CallToolResult | CreateTaskResult> => {
      const { name } = request.params;
      const client = clientClaim(server.getClientVersion()?.name);
      const answered = await answerToolCall(runtime, settings, name, request.params.arguments ?? {}, {
        client,
        isProtocolError: (error) => error instanceof McpError,
        answerOutcome: (outcome) => answerRun(server, runtime, outcome, settings, extra),
        async execute(run) {
          const token = request.params._meta?.progressToken;
          if (request.params.task && settings.tasks && extra.taskStore) {
            // After a CreateTaskResult the request's stream may be gone (Streamable HTTP): no related request id.
            const send = token === undefined ? undefined : progressSender(token, (note) => server.notification(note));
            return await executeAsTask(runtime, run, extra.taskStore, settings.tasks, send && { send, owner: server });
          }
          // Without a token or a log level the run goes as it always did; with one, its id is needed before it starts.
          const progress =
            token === undefined ? undefined : progressSender(token, (note) => extra.sendNotification(note));
          const threshold = logLevel;
          const outcome: DecisionOutcome =
            progress === undefined && threshold === undefined
              ? await runtime.execute(run)
              : await executeWithProgress(runtime, run, {
                  async send(note) {
                    if (progress) await progress(note);
                    const message = runLogMessage(note.message);
                    if (threshold !== undefined && atLeast(message.level, threshold))
                      await extra.sendNotification({ method: "notifications/message", params: { ...message } });
                  },
                });
          return await answerRun(server, runtime, outcome, settings, extra);
        },
      });
      if (answered === undefined) throw new McpError(ErrorCode.InvalidParams, `Tool ${name} not found`);
      return answered;
    },
  );
}

/** How one protocol's server runs `execute` and answers a run's outcome; the rest of a call is the same for all. */
export interface ToolCallSurface<Answer> {
  /** The client's claim of its name, quoted (`clientClaim`). */
  client: string;
  /** Errors the protocol answers as such (a tool that is not there); every other failure is an `isError` result. */
  isProtocolError(error: unknown): boolean;
  execute(run: { code: string; by: string }): Promise<Answer>;
  answerOutcome(outcome: DecisionOutcome): Promise<CallToolResult>;
}

/**
 * One `tools/call` of a Code Mode server, whatever the protocol: `search`, `describe`, `execute`,
 * a tool the model calls directly, and with `operatorTools` `pending`, `approve`, `reject` and
 * `decide`. Undefined for a tool this server does not have.
 */
export async function answerToolCall<Answer>(
  runtime: CodemodeRuntime,
  settings: ServerToolSettings,
  name: string,
  args: Args,
  surface: ToolCallSurface<Answer>,
): Promise<Answer | CallToolResult | undefined> {
  const known = toolList(runtime, settings).some((tool) => tool.name === name);
  if (!known) return undefined;
  /** A decision made here: the run's task followers read it at once, not when the budget comes to it. */
  const nudged = <T>(deciding: Promise<T>): Promise<T> => {
    const executionId = typeof args.executionId === "string" ? args.executionId : undefined;
    if (!executionId || !settings.tasks) return deciding;
    const { followers } = settings.tasks;
    // Once the decision is recorded (soon), and again when the resumed run has answered.
    setTimeout(() => followers.nudge(executionId), 50).unref();
    return deciding.finally(() => followers.nudge(executionId));
  };
  const by = `an MCP client that calls itself ${surface.client}`;
  const operator = `operator via an MCP client that calls itself ${surface.client}`;
  try {
    switch (name) {
      case "search":
        return structured(await runtime.search(text(args, "query")));
      case "describe":
        return structured(await runtime.describe(text(args, "target")));
      case "execute":
        // Who asked, as the inbox and `codemode show` say it: the client's own claim of its name.
        return await surface.execute({ code: text(args, "code"), by });
      case "pending": {
        const executionId = optionalText(args, "executionId");
        const cursor = optionalText(args, "cursor");
        return structured(
          await runtime.pending({ ...(executionId ? { executionId } : {}), ...(cursor ? { cursor } : {}) }),
        );
      }
      case "approve":
        return outcomeResult(await nudged(runtime.approve(operatorDecision(operator, args, "approve"))), settings);
      case "reject": {
        const decision = { ...operatorDecision(operator, args, "reject"), approved: false };
        return outcomeResult(await nudged(decidePendingAction(runtime, decision)), settings);
      }
      case "decide":
        return outcomeResult(
          await nudged(decidePendingActions(runtime, await operatorDecisions(operator, args))),
          settings,
        );
      default: {
        // A tool the model calls directly: its one-call run, answered as execute answers a program's.
        const direct = modelToolNamed(runtime, name);
        if (!direct) return undefined;
        return await surface.answerOutcome(await runtime.callTool({ tool: direct.tool, args, by }));
      }
    }
  } catch (error) {
    if (surface.isProtocolError(error)) throw error;
    // Reads reject with CodemodeError (STORAGE_ERROR, BUSY) and inputs with ToolInputError: both
    // are results the agent can read, not protocol failures.
    return { isError: true, content: [{ type: "text", text: errorMessage(error) }] };
  }
}

/**
 * A run's outcome as a tool's answer: a pause is first put to a client that may decide, through
 * elicitation, when the server asks so (`elicitApproval`).
 */
async function answerRun(
  server: Server,
  runtime: CodemodeRuntime,
  outcome: DecisionOutcome,
  settings: ServerToolSettings,
  extra: { requestId: string | number; signal: AbortSignal },
): Promise<CallToolResult> {
  if (outcome.status !== "paused" || !settings.elicitApproval || !canElicit(server))
    return outcomeResult(outcome, settings);
  // The client names itself; recorded as its claim, not as a verified person (R-AP-7).
  const by = `elicitation, answered in an MCP client that calls itself ${clientClaim(server.getClientVersion()?.name)}`;
  const asked = await askForApprovals(server, runtime, outcome, {
    relatedRequestId: extra.requestId,
    signal: extra.signal,
    timeoutMs: settings.elicitationTimeoutMs,
    by,
  });
  return outcomeResult(asked.outcome, settings, asked.stillPending);
}

/** The note the client may show the model at once, while the task goes on (SEP-1686). */
const IMMEDIATE_RESPONSE = "io.modelcontextprotocol/model-immediate-response";

/**
 * `execute` as an MCP task: the code is stored, its run starts in this process without being
 * awaited (a `recover` of the submitted execution), and the task (id = execution id) is answered
 * at once, or after `afterMs` when the run ends sooner. Any server process over the same store
 * answers `tasks/get` and `tasks/result` for it from then on.
 */
async function executeAsTask(
  runtime: CodemodeRuntime,
  program: { code: string; by: string },
  taskStore: RequestTaskStore,
  tasks: TaskSettings,
  progress?: { send: (note: ProgressNote) => Promise<void>; owner: object },
): Promise<CreateTaskResult> {
  const submitted = await runtime.submit(program);
  // A refused program is no task: the SDK shows the client a protocol error with the reason.
  if ("status" in submitted) throw new McpError(ErrorCode.InvalidParams, submitted.error);
  const { executionId } = submitted;
  // A task's progress follows the run past its pauses: approved in any process, the rest of the
  // run is reported too, until it ends or the connection goes (bounded per connection and server).
  if (progress) tasks.followers.follow({ executionId, ...progress, maxFollowMs: tasks.ttlMs });
  // The outcome is recorded in the store; a failure there is the run's to report, not this answer's.
  const run = runtime.recover({ executionId }).catch(() => []);
  if (tasks.afterMs > 0) {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const waited = new Promise((resolve) => {
      timer = setTimeout(resolve, tasks.afterMs);
    });
    await Promise.race([run, waited]);
    clearTimeout(timer);
  }
  const task = await taskStore.createTask({
    ttl: tasks.ttlMs,
    pollInterval: tasks.pollIntervalMs,
    context: { executionId },
  });
  const note = `Started as task ${executionId} (the execution id); status ${task.status}. The client polls tasks/get and reads the outcome with tasks/result.`;
  return { task, _meta: { [IMMEDIATE_RESPONSE]: note } };
}

/** Sends a progress note for the client's `progressToken` through `notify`. */
function progressSender(
  progressToken: string | number,
  notify: (note: {
    method: "notifications/progress";
    params: { progressToken: string | number; progress: number; message: string };
  }) => Promise<void>,
): (note: ProgressNote) => Promise<void> {
  return (note) => notify({ method: "notifications/progress", params: { progressToken, ...note } });
}

/** An outcome as the `execute` tool answers it (and `tasks/result` for a task). */
export function outcomeResult(
  outcome: DecisionOutcome,
  settings: ServerToolSettings,
  stillPending?: string,
): CallToolResult {
  const facing = modelFacingDecision(outcome, settings.modelOutput);
  const value =
    facing.status === "paused"
      ? { ...facing, message: pauseMessage(facing.executionId, facing.pending.length, settings, stillPending) }
      : facing;
  return structured(value, outcome.status === "error");
}

/**
 * What an MCP client is told of a pause that `execute` leaves waiting: the adapters' "the app"
 * means nothing here. Who can approve it, from where (the client itself cannot: it did not answer
 * an elicitation, or was never asked), and that nothing on this server shows the result later.
 */
function pauseMessage(executionId: string, count: number, settings: ServerToolSettings, stillPending?: string): string {
  const where = settings.operatorTools
    ? `this server's approve tool, \`codemode approve ${executionId}\` or \`codemode inbox\``
    : `\`codemode approve ${executionId}\` or \`codemode inbox\``;
  const result = settings.operatorTools
    ? "Call approve only when the user says so; it answers the result."
    : "The operator sees the result; this server cannot show it to you later.";
  return `Paused: ${stillPending ? `${stillPending} An` : "an"} operator must approve the pending ${count === 1 ? "action" : "actions"} (${where}); the run then resumes by itself. Tell the user what waits and the execution id; do not re-issue the code. ${result}`;
}

/** A result as `structuredContent`, and as JSON text for clients that read only content. */
function structured(value: unknown, isError = false): CallToolResult {
  const json = toModelJson(value) as Record<string, unknown>;
  return {
    content: [{ type: "text", text: JSON.stringify(json) }],
    structuredContent: json,
    ...(isError ? { isError: true } : {}),
  };
}

/**
 * An operator's decision from the approve and reject tools: the action the operator saw (its seq,
 * never "whatever is pending now"), who decided (the client's claimed name) and why.
 */
function operatorDecision(
  by: string,
  args: Args,
  tool: "approve" | "reject",
): { executionId: string; seq: number; by: string; reason?: string } {
  const seq = optionalSeq(args);
  if (seq === undefined) throw new ToolInputError(`${tool} needs seq: the pending action's number (see pending)`);
  const reason = optionalText(args, "reason");
  return { executionId: text(args, "executionId"), seq, by, ...(reason ? { reason } : {}) };
}

/** The decide tool's input, checked against its schema before the runtime checks it again. */
const checkDecideInput = createArgsValidator("decide", { inputSchema: schemas.decideInputSchema });

/** An operator's decisions from the decide tool: refused whole when the input does not fit its schema. */
async function operatorDecisions(
  by: string,
  args: Args,
): Promise<{ executionId: string; decisions: Decision[]; by: string; reason?: string }> {
  const checked = await checkDecideInput(args);
  if (!checked.ok) throw new ToolInputError(checked.message);
  const reason = optionalText(args, "reason");
  return {
    executionId: text(args, "executionId"),
    decisions: args.decisions as Decision[],
    by,
    ...(reason ? { reason } : {}),
  };
}

function text(args: Args, key: string): string {
  const value = args[key];
  if (typeof value !== "string") throw new ToolInputError(`${key} must be a string`);
  return value;
}

function optionalText(args: Args, key: string): string | undefined {
  const value = args[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string") throw new ToolInputError(`${key} must be a string`);
  return value;
}

function optionalSeq(args: Args): number | undefined {
  const value = args.seq;
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 0)
    throw new ToolInputError("seq must be a whole number");
  return value;
}

/** The name the client gave (in `initialize`, or with each request), quoted, on one line and cut: it is the client's claim, kept in the audit log. */
export function clientClaim(name: unknown): string {
  if (typeof name !== "string" || name.trim() === "") return "nothing";
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is removed.
  const clean = name.replace(/[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2066-\u2069]/g, "").slice(0, 80);
  return JSON.stringify(clean);
}
