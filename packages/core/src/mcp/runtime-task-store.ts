import type { CreateTaskOptions, TaskStore } from "@modelcontextprotocol/sdk/experimental/tasks";
import { type CallToolResult, ErrorCode, McpError, type Task } from "@modelcontextprotocol/sdk/types.js";
import type { ExecutionState, ExecutionStatus, Outcome } from "../outcome.js";
import type { CodemodeRuntime } from "../runtime/handle/index.js";

/** How a runtime-backed task store answers (see `CodemodeMcpServerOptions`). */
export interface RuntimeTaskStoreOptions {
  /** The `ttl` every task reports, in ms. */
  ttlMs: number;
  /** How often a client should poll `tasks/get`, in ms. */
  pollIntervalMs: number;
  /** Shapes an ended run's outcome as the `execute` tool answers it. */
  toResult(outcome: Outcome): CallToolResult;
}

/** An execution's status as an MCP task's: a pause waits for a person's input. */
const TASK_STATUS: Record<ExecutionStatus, Task["status"]> = {
  running: "working",
  paused: "input_required",
  completed: "completed",
  error: "failed",
  rolled_back: "failed",
  rejected: "cancelled",
};

/**
 * An MCP `TaskStore` whose truth is the runtime's store: the task id is the execution id, and
 * every answer is read from the execution, so any server process over the same store answers for
 * any task, after a restart or a reconnect as well. Sessions are ignored: stdio has none, and a
 * Streamable HTTP client gets a new one when it reconnects. Results are the runtime's outcomes,
 * so `storeTaskResult` has nothing to keep.
 *
 * @example
 * const taskStore = createRuntimeTaskStore(runtime, { ttlMs: 86_400_000, pollIntervalMs: 2_000, toResult });
 * new Server(info, { capabilities: { tasks: { … } }, taskStore });
 */
export function createRuntimeTaskStore(runtime: CodemodeRuntime, options: RuntimeTaskStoreOptions): TaskStore {
  const taskOf = async (executionId: string): Promise<Task | null> => {
    const execution = await runtime.execution(executionId);
    return execution ? await describeTask(runtime, execution, options) : null;
  };
  return {
    async createTask(params: CreateTaskOptions) {
      // The execute tool submits the run first; the task is that execution, seen as a task.
      const executionId = params.context?.executionId;
      if (typeof executionId !== "string") throw new TypeError("createTask needs context.executionId");
      const task = await taskOf(executionId);
      if (!task) throw new McpError(ErrorCode.InternalError, `Execution ${executionId} is gone`);
      return task;
    },
    getTask: (taskId) => taskOf(taskId),
    // The runtime records every outcome itself; nothing here produces a result of its own.
    async storeTaskResult() {},
    async getTaskResult(taskId) {
      const outcome = await runtime.outcome(taskId);
      if (!outcome) throw new McpError(ErrorCode.InvalidParams, `Task not found: ${taskId}`);
      return options.toResult(outcome);
    },
    async updateTaskStatus(taskId, status) {
      // Only tasks/cancel asks this of us: the runtime decides every other change of status.
      if (status !== "cancelled") return;
      await cancel(runtime, taskId);
    },
    async listTasks() {
      // A task id is the run's execution id, and whoever holds it may read or cancel the run: listing
      // every run to any client would hand out the ids of other people's runs. Nothing is listed.
      return { tasks: [] };
    },
  };
}

async function describeTask(
  runtime: CodemodeRuntime,
  execution: ExecutionState,
  options: RuntimeTaskStoreOptions,
): Promise<Task> {
  const statusMessage = await messageFor(runtime, execution);
  return {
    taskId: execution.id,
    status: TASK_STATUS[execution.status],
    createdAt: new Date(execution.createdAt).toISOString(),
    lastUpdatedAt: new Date(execution.updatedAt).toISOString(),
    ttl: options.ttlMs,
    pollInterval: options.pollIntervalMs,
    ...(statusMessage ? { statusMessage } : {}),
  };
}

/** What a client shows beside the status: who must act on a pause, and how. */
async function messageFor(runtime: CodemodeRuntime, execution: ExecutionState): Promise<string | undefined> {
  switch (execution.status) {
    case "paused": {
      const pending = (await runtime.pending({ executionId: execution.id })).items;
      const actions = pending.map((action) => `${action.connector}.${action.method} (seq ${action.seq})`).join(", ");
      return `Paused: ${actions || "an action"} waits for a person's approval. An operator approves it with \`codemode approve ${execution.id}\` or \`codemode inbox\`; the run then resumes by itself. Poll tasks/get; tasks/result answers once it ends.`;
    }
    case "error":
      return execution.error;
    case "rolled_back":
      return "Rolled back by an operator.";
    case "rejected":
      if (execution.errorCode === "CANCELLED") return `The run was ${execution.error ?? "cancelled"}.`;
      if (execution.errorCode === "APPROVAL_DENIED")
        return `A person denied an action: ${execution.error ?? "denied"}.`;
      return "A person rejected a pending action; it did not run.";
    default:
      return undefined;
  }
}

/**
 * tasks/cancel: the run is cancelled wherever it stands (`runtime.cancel`): a paused run is
 * rejected with its pending actions closed, a running pass is stopped, in this server process or
 * another, and the run ends `rejected` (the task `cancelled`). A pass elsewhere that has not
 * stopped within the wait reads the request soon after; tasks/get says `cancelled` then.
 */
async function cancel(runtime: CodemodeRuntime, executionId: string): Promise<void> {
  const report = await runtime.cancel({
    executionId,
    by: "MCP client (tasks/cancel)",
    reason: "The MCP client cancelled the task.",
  });
  if (report.result === "not_found") throw new McpError(ErrorCode.InvalidParams, `Task not found: ${executionId}`);
  if (report.result === "ended")
    throw new McpError(
      ErrorCode.InvalidParams,
      `Execution ${executionId} has ended (${report.status}): nothing to cancel`,
    );
}
