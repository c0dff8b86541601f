import { createHash } from "node:crypto";
import { chatMayDecide } from "../adapters/chat-decision.js";
import { type DecisionOutcome, decidePendingAction, decidePendingActions } from "../adapters/decide-pending-action.js";
import type { ExecutionState, PendingAction } from "../outcome.js";
import type { CodemodeRuntime } from "../runtime/handle/index.js";
import { type ApprovalForm, approvalForm, MAX_FORM_ACTIONS, readFormAnswer } from "./elicit-approval.js";
import { outcomeResult, type ServerToolSettings } from "./server-tools.js";

export { TASKS_EXTENSION } from "./task-result-hook.js";

/** A task as `tools/call` creates it and `tasks/get` answers it (SEP-2663's `DetailedTask`). */
export interface ExtensionTask {
  taskId: string;
  status: "working" | "input_required" | "completed" | "failed" | "cancelled";
  statusMessage?: string;
  createdAt: string;
  lastUpdatedAt: string;
  ttlMs: number;
  pollIntervalMs: number;
  /** With `input_required`: what the client is asked, by key (each key is one pause's question). */
  inputRequests?: Record<string, { method: "elicitation/create"; params: Record<string, unknown> }>;
  /** With `completed`: the `CallToolResult` that `execute` answers. */
  result?: Record<string, unknown>;
}

/** Who asks, and whether the server lets this client decide the pauses it is shown. */
export interface TaskAsker {
  /** `elicitApproval` is on and the client declared form elicitation in this request. */
  mayDecide: boolean;
  /** Recorded as who decided (R-AP-7): the client's claim of its name. */
  by: string;
}

/** A request about a task the client got wrong: a protocol error (invalid params) with this message. */
export class TaskRequestError extends Error {
  override name = "TaskRequestError";
}

/** Every input request key this server makes starts so; one that is not current answers an earlier pause. */
const KEY_PREFIX = "approval-";

/**
 * The question a paused run puts to a client that may decide: the actions it may decide (at most
 * `MAX_FORM_ACTIONS`) as one approval form, under a key bound to exactly those actions in exactly
 * this pause (their seqs and pause ids): an answer to an earlier pause, or to a question altered
 * on the way, matches no key. Undefined when the client may decide none of them.
 */
export function approvalQuestion(
  runtime: CodemodeRuntime,
  execution: ExecutionState,
  pending: readonly PendingAction[],
): { key: string; form: ApprovalForm } | undefined {
  const decidable = pending.filter((action) => chatMayDecide(runtime, action));
  if (decidable.length === 0) return undefined;
  const offered = decidable.slice(0, MAX_FORM_ACTIONS);
  const form = approvalForm(
    execution.id,
    offered,
    { operatorOnly: pending.length - decidable.length, later: decidable.length - offered.length },
    { edit: true },
  );
  const bound = offered.map((action) => `${action.seq}:${action.pauseId ?? ""}`).join(",");
  const digest = createHash("sha256").update(`${execution.id}\n${bound}`).digest("hex").slice(0, 24);
  return { key: `${KEY_PREFIX}${digest}`, form };
}

/**
 * An execution as a task of the tasks extension: running is `working`; a pause is
 * `input_required`, with the approval form, for a client that may decide, and `working` with a
 * message saying who decides for any other (it is asked for nothing); a run that ended is
 * `completed` with `execute`'s answer as its result (a failed program included: its result says
 * so, as a plain call's would), except a cancelled one. Null when there is no such execution.
 */
export async function extensionTask(
  runtime: CodemodeRuntime,
  executionId: string,
  settings: ServerToolSettings & { tasks: NonNullable<ServerToolSettings["tasks"]> },
  asker: Pick<TaskAsker, "mayDecide">,
): Promise<ExtensionTask | null> {
  const execution = await runtime.execution(executionId);
  if (!execution) return null;
  const task: ExtensionTask = {
    taskId: execution.id,
    status: "working",
    createdAt: new Date(execution.createdAt).toISOString(),
    lastUpdatedAt: new Date(execution.updatedAt).toISOString(),
    ttlMs: settings.tasks.ttlMs,
    pollIntervalMs: settings.tasks.pollIntervalMs,
  };
  if (execution.status === "running") return task;
  if (execution.status === "paused") {
    const pending = (await runtime.pending({ executionId })).items;
    const question = asker.mayDecide ? approvalQuestion(runtime, execution, pending) : undefined;
    if (!question) return { ...task, statusMessage: operatorMessage(execution.id, pending, asker.mayDecide) };
    const { form } = question;
    return {
      ...task,
      status: "input_required",
      statusMessage: `Paused: ${form.offered.size === 1 ? "an action waits" : `${form.offered.size} actions wait`} for your decision (tasks/update).`,
      inputRequests: {
        [question.key]: {
          method: "elicitation/create",
          params: { mode: "form", message: form.message, requestedSchema: form.requestedSchema },
        },
      },
    };
  }
  if (execution.status === "rejected" && execution.errorCode === "CANCELLED")
    return { ...task, status: "cancelled", statusMessage: `The run was ${execution.error ?? "cancelled"}.` };
  const outcome = await runtime.outcome(executionId);
  if (!outcome) return null;
  return { ...task, status: "completed", result: outcomeResult(outcome, settings) as Record<string, unknown> };
}

/** How long `tasks/update` waits to see whether the runtime refused the decisions at once. */
const REFUSAL_WAIT_MS = 250;

/**
 * `tasks/update`: the client's answers to the current pause's question (R-AP-8, R-AP-9): accept
 * applies each approve, deny or edit (with the arguments of `args_<n>`) in one `runtime.decide`, decline rejects the
 * run, cancel leaves it paused. The run then goes on in this process, and `tasks/get` follows it.
 * Refused, with nothing decided: a client that may not decide; an answer bound to a pause that no
 * longer waits (answered already, or asked again since); an answer the form did not ask. Keys
 * this server never made are ignored, as the extension says.
 */
export async function updateExtensionTask(
  runtime: CodemodeRuntime,
  executionId: string,
  inputResponses: Record<string, unknown>,
  asker: TaskAsker,
): Promise<void> {
  const execution = await runtime.execution(executionId);
  if (!execution) throw new TaskRequestError(`Task not found: ${executionId}`);
  const pending = execution.status === "paused" ? (await runtime.pending({ executionId })).items : [];
  if (!asker.mayDecide)
    throw new TaskRequestError(
      `This client may not decide the run's approvals: ${operatorMessage(executionId, pending, false)} Nothing was decided.`,
    );
  const question = execution.status === "paused" ? approvalQuestion(runtime, execution, pending) : undefined;
  for (const [key, response] of Object.entries(inputResponses)) {
    if (question && key === question.key) return await answer(runtime, executionId, question.form, response, asker);
    if (key.startsWith(KEY_PREFIX))
      throw new TaskRequestError(
        `The answer ${JSON.stringify(key.slice(0, 64))} is for a pause that no longer waits (answered already, or asked again since): it decides nothing. tasks/get shows what waits now.`,
      );
  }
}

async function answer(
  runtime: CodemodeRuntime,
  executionId: string,
  form: ApprovalForm,
  response: unknown,
  asker: TaskAsker,
): Promise<void> {
  const deciding = applyAnswer(runtime, executionId, form, response, `tasks/update from ${asker.by}`);
  if (deciding === "cancel") return;
  // The run goes on after the decision, maybe for long: wait only to tell a refusal from a start.
  const settled = deciding.then(
    (outcome) => outcome,
    () => undefined,
  );
  let timer: ReturnType<typeof setTimeout> | undefined;
  const early = await Promise.race([
    settled,
    new Promise<"going">((resolve) => {
      timer = setTimeout(() => resolve("going"), REFUSAL_WAIT_MS);
    }),
  ]);
  clearTimeout(timer);
  if (early && early !== "going" && isRefusal(early))
    throw new TaskRequestError(`${early.status === "error" ? early.error : ""} Nothing was decided.`);
}

/**
 * One answer to an approval form, as elicitation results come (R-AP-8, R-AP-9): accept applies
 * each choice in one `runtime.decide`, decline rejects the run, cancel decides nothing. Resolves
 * with the outcome once the resumed run stops again; an answer the form did not ask throws
 * `TaskRequestError` before anything is decided.
 */
export function applyAnswer(
  runtime: CodemodeRuntime,
  executionId: string,
  form: ApprovalForm,
  response: unknown,
  by: string,
): Promise<DecisionOutcome> | "cancel" {
  const result = (typeof response === "object" && response !== null ? response : {}) as {
    action?: unknown;
    content?: Record<string, unknown>;
  };
  if (result.action === "cancel") return "cancel";
  if (result.action === "decline") {
    const given = result.content?.reason;
    const reason = typeof given === "string" && given.trim() !== "" ? given.trim() : "declined when asked";
    const seq = [...form.offered.values()][0]?.seq ?? 0;
    return decidePendingAction(runtime, { executionId, seq, approved: false, by, reason });
  }
  if (result.action !== "accept")
    throw new TaskRequestError('An answer is an elicitation result: action "accept", "decline" or "cancel".');
  const read = readFormAnswer(form, result.content);
  if ("refused" in read) throw new TaskRequestError(`The answer was refused (${read.refused}); nothing was decided.`);
  return decidePendingActions(runtime, { executionId, decisions: read.decisions, by });
}

/** Whether the runtime refused a decision before deciding anything (the run is as it was). */
export function isRefusal(outcome: DecisionOutcome): boolean {
  return outcome.status === "error" && REFUSALS.has(outcome.code);
}

/** Error codes with which the runtime refuses decisions before deciding anything. */
const REFUSALS: ReadonlySet<string> = new Set(["NOT_PAUSED", "NOT_FOUND", "INVALID_DECISION", "BUSY"]);

/** What a client that is not asked is told of a pause: who decides it, and how. */
function operatorMessage(executionId: string, pending: readonly PendingAction[], mayDecide: boolean): string {
  const actions = pending.map((action) => `${action.connector}.${action.method} (seq ${action.seq})`).join(", ");
  const why = mayDecide ? "reserved to an operator" : "for an operator to approve";
  return `Paused: ${actions || "an action"} waits, ${why}: \`codemode approve ${executionId}\` or \`codemode inbox\`; the run then resumes by itself. Poll tasks/get.`;
}
