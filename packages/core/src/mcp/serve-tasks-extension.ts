import { createHash } from "node:crypto";
import { chatMayDecide, signPauseApproval, verifyPauseApproval } from "../adapters/chat-decision.js";
import { type DecisionOutcome, decidePendingAction, decidePendingActions } from "../adapters/decide-pending-action.js";
import type { ExecutionState, PendingAction } from "../outcome.js";
import type { CodemodeRuntime } from "../runtime/handle/index.js";
import { type ApprovalForm, approvalForm, MAX_FORM_ACTIONS, readFormAnswer } from "./elicit-approval.js";
import { outcomeResult, type ServerToolSettings } from "./server-tools.js";

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

/** A run's pending actions, and the question they put to a client that may decide; none unless it is paused. */
export async function pausedQuestion(
  runtime: CodemodeRuntime,
  execution: ExecutionState | null,
): Promise<{ pending: PendingAction[]; question?: { key: string; form: ApprovalForm } }> {
  if (execution?.status !== "paused") return { pending: [] };
  const pending = (await runtime.pending({ executionId: execution.id })).items;
  const question = approvalQuestion(runtime, execution, pending);
  return question ? { pending, question } : { pending };
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
  taskId: string,
  settings: ServerToolSettings & { tasks: NonNullable<ServerToolSettings["tasks"]> },
  asker: Pick<TaskAsker, "mayDecide">,
): Promise<ExtensionTask | null> {
  const { execution, signed } = await readTask(runtime, taskId);
  if (!execution) return null;
  const executionId = execution.id;
  const task: ExtensionTask = {
    taskId,
    status: "working",
    createdAt: new Date(execution.createdAt).toISOString(),
    lastUpdatedAt: new Date(execution.updatedAt).toISOString(),
    ttlMs: settings.tasks.ttlMs,
    pollIntervalMs: settings.tasks.pollIntervalMs,
  };
  if (execution.status === "running") return task;
  if (execution.status === "paused") {
    const { pending, question: asked } = await pausedQuestion(runtime, execution);
    // Only the holder of the task this server gave is asked: an execution id alone (an inbox's,
    // a pause message's) reads the run, as with 2025 tasks, but decides nothing.
    const question = asker.mayDecide && signed ? asked : undefined;
    if (!question) return { ...task, statusMessage: operatorMessage(executionId, pending, asker.mayDecide) };
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

/** What a signed task id's signature covers: this server's task for this execution and code. */
const TASK_CLAIM = "mcp:tasks-extension";

/**
 * The id of the task `execute` started for `executionId`: the execution id and this runtime's
 * signature over it and its code (as a chat's approval request is signed, R-AP-11), so that only
 * the client given the task may decide its pauses; the bare execution id reads it. Without a
 * runtime of `createCodemodeRuntime`, the bare execution id.
 */
export function signedTaskId(runtime: CodemodeRuntime, executionId: string, code: string): string {
  const signature = signPauseApproval(runtime, { executionId, seq: 0, toolCallId: TASK_CLAIM }, code);
  return signature ? `${executionId}.${signature}` : executionId;
}

/** The execution a task id names, and whether the id is the signed one this runtime gave. */
export async function readTask(
  runtime: CodemodeRuntime,
  taskId: string,
): Promise<{ execution: ExecutionState | null; executionId: string; signed: boolean }> {
  const dot = taskId.indexOf(".");
  const executionId = dot < 0 ? taskId : taskId.slice(0, dot);
  const execution = await runtime.execution(executionId);
  const claim = { executionId, seq: 0, toolCallId: TASK_CLAIM };
  const signed =
    execution !== null && dot >= 0 && verifyPauseApproval(runtime, claim, execution.code, taskId.slice(dot + 1));
  return { execution, executionId, signed };
}

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
  taskId: string,
  inputResponses: Record<string, unknown>,
  asker: TaskAsker,
): Promise<void> {
  const { execution, executionId, signed } = await readTask(runtime, taskId);
  if (!execution) throw new TaskRequestError(`Task not found: ${taskId.slice(0, 200)}`);
  const { pending, question } = await pausedQuestion(runtime, execution);
  if (!asker.mayDecide)
    throw new TaskRequestError(
      `This client may not decide the run's approvals: ${operatorMessage(executionId, pending, false)} Nothing was decided.`,
    );
  if (!signed)
    throw new TaskRequestError(
      "Only the task id this server gave when it started the task decides its pauses (an execution id alone, or a task id signed with another approvalSecret, does not): nothing was decided.",
    );
  // The current question's answer first, wherever it stands among the keys.
  if (question && question.key in inputResponses)
    return await answer(runtime, execution, question, inputResponses[question.key], asker);
  const stale = Object.keys(inputResponses).find((key) => key.startsWith(KEY_PREFIX));
  if (stale !== undefined)
    throw new TaskRequestError(
      `The answer ${JSON.stringify(stale.slice(0, 64))} is for a pause that no longer waits (answered already, or asked again since): it decides nothing. tasks/get shows what waits now.`,
    );
}

async function answer(
  runtime: CodemodeRuntime,
  execution: ExecutionState,
  question: { key: string; form: ApprovalForm },
  response: unknown,
  asker: TaskAsker,
): Promise<void> {
  const deciding = applyAnswer(runtime, execution.id, question.form, response, `tasks/update from ${asker.by}`);
  if (deciding === "cancel") return;
  let settled: DecisionOutcome | undefined;
  let failed = false;
  let failure: unknown;
  const done = deciding.then(
    (outcome) => {
      settled = outcome;
    },
    (error: unknown) => {
      failed = true;
      failure = error;
    },
  );
  // The run goes on after the decision, maybe for long: wait until the decision is recorded (the
  // run has left this pause) or refused (BUSY after the runtime's lock wait, INVALID_DECISION…).
  const until = Date.now() + RECORD_WAIT_MS;
  while (settled === undefined && !failed && Date.now() < until) {
    await Promise.race([done, new Promise((resolve) => setTimeout(resolve, RECORD_POLL_MS))]);
    if (settled !== undefined || failed) break;
    const now = await runtime.execution(execution.id).catch(() => null);
    // Recorded: the run no longer waits in the pause this question asked about.
    if (now && (await pausedQuestion(runtime, now)).question?.key !== question.key) return;
  }
  // A store that failed is no answer at all: the client hears so, not that its answer was taken.
  if (failed) throw failure;
  if (settled !== undefined && isRefusal(settled))
    throw new TaskRequestError(`${(settled as { error?: string }).error ?? "Refused."} Nothing was decided.`);
}

/** How long `tasks/update` waits for its decision to be recorded, and how often it looks. */
const RECORD_WAIT_MS = 15_000;
const RECORD_POLL_MS = 25;

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
