import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { RequestId } from "@modelcontextprotocol/sdk/types.js";
import { chatMayDecide } from "../adapters/chat-decision.js";
import { type DecisionOutcome, decidePendingAction, decidePendingActions } from "../adapters/decide-pending-action.js";
import { describePendingAction } from "../adapters/pending-approval.js";
import { errorMessage } from "../error-message.js";
import type { PendingAction } from "../outcome.js";
import type { CodemodeRuntime } from "../runtime/handle/index.js";
import type { Decision } from "../runtime/operations/index.js";

type DecidingRuntime = Pick<CodemodeRuntime, "approve" | "reject" | "execution" | "decide" | "outcome">;

export interface ElicitationContext {
  /** The `tools/call` request the questions belong to (Streamable HTTP sends them on its stream). */
  relatedRequestId: RequestId;
  /** Aborted when the client cancels the call: the question is withdrawn, the run stays paused. */
  signal: AbortSignal;
  /** How long one question waits for the person. */
  timeoutMs: number;
  /** Recorded as who decided (R-AP-7). */
  by: string;
}

/** How the questions ended: the outcome after the person's answers, and a note when they left it paused. */
export interface ElicitedOutcome {
  outcome: DecisionOutcome;
  /** Set when the run is still paused because nobody decided: why, said to the model before who can approve it. */
  stillPending?: string;
}

/** Whether the connected client takes `elicitation/create` in form mode. */
export function canElicit(server: Server): boolean {
  return takesFormElicitation(server.getClientCapabilities()?.elicitation);
}

/** Whether a client's `elicitation` capability (of `initialize`, or of a 2026-07-28 request) takes form mode. */
export function takesFormElicitation(elicitation: object | undefined): boolean {
  if (elicitation === undefined) return false;
  // An empty capability object means form mode (protocol versions before URL mode).
  return (elicitation as { form?: unknown }).form !== undefined || Object.keys(elicitation).length === 0;
}

/** The most actions one form offers: a person cannot weigh more at once; the rest are asked next. */
export const MAX_FORM_ACTIONS = 20;
/** Characters of an action's title (`shop.order({…})`) and of its tool's description in the form. */
const TITLE_CHARS = 240;
const DESCRIPTION_CHARS = 300;

const CHOICES = ["approve", "deny"] as const;
/** With `edit`: the action runs with other arguments, given as JSON in its `args_<n>` property. */
const EDIT_CHOICES = ["approve", "deny", "edit"] as const;
type Choice = (typeof EDIT_CHOICES)[number];
/** The largest edited arguments an answer may carry, as JSON text. */
const MAX_EDIT_CHARS = 100_000;

/** One question about a paused run: the actions it offers, by the form property that decides each. */
export interface ApprovalForm {
  offered: ReadonlyMap<string, PendingAction>;
  /** Whether "edit" is offered (each action's `args_<n>` then carries the arguments that run instead). */
  edit: boolean;
  message: string;
  requestedSchema: {
    type: "object";
    properties: Record<string, Record<string, unknown> & { type: "string" }>;
    required: string[];
  };
}

/**
 * The form for the actions a client may decide (R-AP-8): one `seq_<n>` property per action,
 * "approve" (preselected) or "deny", each required, titled with the call and its tool's
 * description, and an optional reason. Elicitation allows only a flat object of primitives, hence a property per action.
 *
 * @example
 * approvalForm("3f…", [order], { operatorOnly: 1, later: 0 }).requestedSchema.properties.seq_2;
 * // { type: "string", title: 'shop.order({"sku":"mug"})', enum: ["approve", "deny"], default: "approve" }
 */
export function approvalForm(
  executionId: string,
  offered: readonly PendingAction[],
  left: { operatorOnly: number; later: number },
  options: { edit?: boolean } = {},
): ApprovalForm {
  const edit = options.edit === true;
  const byProperty = new Map(offered.map((action) => [`seq_${action.seq}`, action]));
  const properties: ApprovalForm["requestedSchema"]["properties"] = {};
  for (const [property, action] of byProperty) {
    const description = action.description ? oneLine(action.description, DESCRIPTION_CHARS) : "";
    properties[property] = {
      type: "string",
      title: oneLine(describePendingAction(action, 160), TITLE_CHARS),
      ...(description ? { description } : {}),
      enum: edit ? [...EDIT_CHOICES] : [...CHOICES],
      default: "approve",
    };
    const asked = JSON.stringify(action.args ?? {});
    if (edit)
      properties[`args_${action.seq}`] = {
        type: "string",
        title: `Arguments for call ${action.seq}, with edit`,
        description: "Only with edit: the arguments that run instead, as a JSON object; the tool's schema checks them.",
        ...(asked.length <= MAX_EDIT_CHARS ? { default: asked } : {}),
      };
  }
  properties.reason = {
    type: "string",
    title: "Reason",
    description: "Optional: why, kept in the audit log; a denied call, or the model on a decline, is told it.",
  };
  const lines = offered.map(
    (action) => `- call ${action.seq}: ${oneLine(describePendingAction(action, 160), TITLE_CHARS)}`,
  );
  const more = [
    left.operatorOnly > 0 ? `${left.operatorOnly} more wait for an operator's decision.` : "",
    left.later > 0 ? `${left.later} more are asked about next.` : "",
  ].filter(Boolean);
  const message = [
    `Code Mode paused execution ${executionId} before ${offered.length === 1 ? "this call" : `these ${offered.length} calls`}:`,
    ...lines,
    edit
      ? "Choose approve, deny or edit for each (edit runs the call with the arguments in its args field), then accept: a denied call does not run and the program is told so. Decline stops the program: nothing pending runs."
      : "Choose approve or deny for each, then accept: a denied call does not run and the program is told so. Decline stops the program: nothing pending runs.",
    ...more,
  ].join("\n");
  // Every choice is required: an answer that leaves one out decides nothing (never a silent approve).
  return {
    offered: byProperty,
    edit,
    message,
    requestedSchema: { type: "object", properties, required: [...byProperty.keys()] },
  };
}

/** What an accepted form decides, or why the answer is refused (then nothing is decided). */
export type FormAnswer = { decisions: Decision[] } | { refused: string };

/**
 * Reads an accepted form as hostile input: only the properties the form asked, each with an
 * allowed value, every choice present, and a string reason. A client answers for itself here:
 * anything else, a choice left out included, refuses the whole answer.
 *
 * @example
 * readFormAnswer(form, { seq_2: "approve", seq_3: "deny", reason: "one is enough" });
 * // { decisions: [{ seq: 2, decision: "approve", reason: "one is enough" }, { seq: 3, decision: "deny", reason: "one is enough" }] }
 */
export function readFormAnswer(form: ApprovalForm, content: unknown): FormAnswer {
  const answer = content ?? {};
  if (typeof answer !== "object" || answer === null || Array.isArray(answer))
    return { refused: "the answer is not an object" };
  const fields = answer as Record<string, unknown>;
  const choices = new Map<string, Choice>();
  const edited = new Map<string, unknown>();
  let reason: string | undefined;
  for (const key of Object.keys(fields)) {
    const value = fields[key];
    if (key === "reason") {
      if (typeof value !== "string") return { refused: "reason must be a string" };
      reason = value.trim() || undefined;
    } else if (form.edit && key.startsWith("args_") && form.offered.has(`seq_${key.slice(5)}`)) {
      const args = editedArgs(key, value);
      if ("refused" in args) return args;
      edited.set(`seq_${key.slice(5)}`, args.value);
    } else if (!form.offered.has(key)) {
      return { refused: `${JSON.stringify(oneLine(key, 40))} was not asked` };
    } else if (value !== "approve" && value !== "deny" && !(form.edit && value === "edit")) {
      return { refused: `${key} must be ${form.edit ? '"approve", "deny" or "edit"' : '"approve" or "deny"'}` };
    } else choices.set(key, value);
  }
  const missing = [...form.offered.keys()].find((property) => !choices.has(property));
  if (missing !== undefined) return { refused: `${missing} was not answered` };
  const unused = [...edited.keys()].find((property) => choices.get(property) !== "edit");
  if (unused !== undefined) return { refused: `args_${unused.slice(4)} is only for edit` };
  const noArgs = [...choices].find(([property, choice]) => choice === "edit" && !edited.has(property));
  if (noArgs) return { refused: `${noArgs[0]} is edit without args_${noArgs[0].slice(4)}` };
  const decisions = [...form.offered].map(([property, action]): Decision => {
    const decision = choices.get(property) as Choice;
    const why = reason ?? (decision === "deny" ? "denied when asked" : undefined);
    // For the pause the person was shown: a call asked again meanwhile is not decided by this answer.
    return {
      seq: action.seq,
      decision,
      ...(decision === "edit" ? { args: edited.get(property) } : {}),
      ...(why ? { reason: why } : {}),
      ...(action.pauseId ? { pauseId: action.pauseId } : {}),
    };
  });
  return { decisions };
}

/** An `args_<n>` answer: a JSON object, bounded; the tool's schema checks it when it is decided. */
function editedArgs(key: string, value: unknown): { value: unknown } | { refused: string } {
  if (typeof value !== "string" || value.length > MAX_EDIT_CHARS)
    return { refused: `${key} must be the arguments as JSON text of at most ${MAX_EDIT_CHARS} characters` };
  try {
    const parsed: unknown = JSON.parse(value);
    if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)) return { value: parsed };
  } catch {
    // Refused below, as any other text that is not an object.
  }
  return { refused: `${key} must be a JSON object` };
}

/**
 * Asks the person at the client about the pending actions of a paused run (beyond, R-AP-8): one
 * form lists them all, each approved or denied, and accept applies the choices in one
 * `runtime.decide` (a denied call rejects inside the program with `ApprovalDenied`); decline
 * rejects the run (`runtime.reject`); a run that pauses again is asked about again. A question
 * that is cancelled, times out, fails or gets an answer the form did not ask leaves the run paused
 * for an operator: nothing is decided without a valid answer. An action the runtime does not let a
 * client decide (`chatApprovals`, the tool's `approvers: "operator"`, R-AP-11) is never offered:
 * it waits for an operator.
 *
 * @example
 * const { outcome } = await askForApprovals(server, runtime, await runtime.execute({ code }), context);
 */
export async function askForApprovals(
  server: Server,
  runtime: DecidingRuntime,
  first: DecisionOutcome,
  context: ElicitationContext,
): Promise<ElicitedOutcome> {
  let outcome = first;
  while (outcome.status === "paused") {
    const executionId = outcome.executionId;
    const decidable = outcome.pending.filter((action) => chatMayDecide(runtime, action));
    const operatorOnly = outcome.pending.length - decidable.length;
    if (decidable.length === 0) {
      const which = operatorOnly === 1 ? "this action is" : "these actions are";
      return { outcome, stillPending: `${which} reserved to an operator's approval.` };
    }
    const offered = decidable.slice(0, MAX_FORM_ACTIONS);
    const form = approvalForm(executionId, offered, { operatorOnly, later: decidable.length - offered.length });
    let answer: Awaited<ReturnType<Server["elicitInput"]>>;
    try {
      answer = await server.elicitInput(
        { mode: "form", message: form.message, requestedSchema: form.requestedSchema },
        { relatedRequestId: context.relatedRequestId, signal: context.signal, timeout: context.timeoutMs },
      );
    } catch (error) {
      return { outcome, stillPending: `asking the person failed (${oneLine(errorMessage(error), 300)}).` };
    }
    if (answer.action === "cancel")
      return { outcome, stillPending: "the person closed the approval request without deciding." };
    if (answer.action === "decline") {
      const given = answer.content?.reason;
      const reason = typeof given === "string" && given.trim() !== "" ? given.trim() : "declined when asked";
      const seq = (offered[0] as PendingAction).seq;
      outcome = await decidePendingAction(runtime, { executionId, seq, approved: false, by: context.by, reason });
      continue;
    }
    const read = readFormAnswer(form, answer.content);
    if ("refused" in read)
      return {
        outcome,
        stillPending: `the answer to the approval request was refused (${read.refused}); nothing was decided.`,
      };
    outcome = await decidePendingActions(runtime, { executionId, decisions: read.decisions, by: context.by });
  }
  return { outcome };
}

/**
 * Text from the program or a connector, fit for one line of a form: whitespace runs become one
 * space, control and direction characters go (they could disguise what is approved), and it is cut.
 */
function oneLine(text: string, maxChars: number): string {
  const plain = text
    .replace(/\s+/g, " ")
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is removed.
    .replace(/[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2066-\u2069]/g, "")
    .trim();
  return plain.length > maxChars ? `${plain.slice(0, maxChars - 1)}…` : plain;
}
