import type { Decision, PendingAction } from "@codemode/core";
import type { PendingDecisions } from "@codemode/core/adapters";
import { actionName } from "./approval-interrupt.js";

const SHAPES = '{ type: "approve" }, { type: "edit", editedAction: { args } } or { type: "reject", message? }';

/**
 * The decisions of a resume value as `runtime.decide` takes them (R-AP-9), one input per execution
 * in the order the actions came, or the problem in one sentence. Decision `i` answers `actions[i]`,
 * as in LangChain 1's human-in-the-loop: approve → approve, edit → edit with `editedAction.args`,
 * reject → deny with `message` as the reason (the program sees an `ApprovalDenied` it may catch).
 * Checked whole before anything is decided, so a wrong count or a malformed decision changes nothing.
 *
 * @example
 * approvalDecisions({ decisions: [{ type: "approve" }, { type: "edit", editedAction: { args } }] }, request.pending)
 */
export function approvalDecisions(response: unknown, actions: readonly PendingAction[]): PendingDecisions[] | string {
  const decisions = (response as { decisions?: unknown } | null | undefined)?.decisions;
  if (!Array.isArray(decisions) || decisions.length !== actions.length) {
    const count = `${actions.length} decision${actions.length === 1 ? "" : "s"}`;
    return `resume with { decisions: [...] } holding ${count} (approve, edit or reject), one per action request, in their order; got ${shown(response)}`;
  }
  const inputs = new Map<string, PendingDecisions>();
  for (const [index, action] of actions.entries()) {
    const where = `decision ${index} for ${actionName(action)}`;
    const decided = toDecision(decisions[index], action, where);
    if (typeof decided === "string") return decided;
    const input = inputs.get(action.executionId) ?? { executionId: action.executionId, decisions: [] };
    inputs.set(action.executionId, input);
    input.decisions.push(decided.decision);
    if (decided.by === undefined) continue;
    // One runtime.decide call records one person for every decision it applies.
    if (input.by !== undefined && input.by !== decided.by)
      return `${where}: by ${JSON.stringify(decided.by)} differs from by ${JSON.stringify(input.by)} of an earlier decision on the same run; one resume records one person per run`;
    input.by = decided.by;
  }
  return [...inputs.values()];
}

/** One HITL decision as a core decision on `action`, with who made it, or the problem. */
function toDecision(
  value: unknown,
  action: PendingAction,
  where: string,
): { decision: Decision; by?: string } | string {
  if (typeof value !== "object" || value === null || Array.isArray(value))
    return `${where} must be ${SHAPES}; got ${shown(value)}`;
  const { type, message, by, editedAction } = value as Record<string, unknown>;
  if (message !== undefined && typeof message !== "string") return `${where}: message must be a string`;
  if (by !== undefined && typeof by !== "string") return `${where}: by must be a string`;
  const notes = { ...(message ? { reason: message } : {}) };
  const who = by ? { by } : {};
  const { seq } = action;
  if (type === "approve") return { decision: { seq, decision: "approve", ...notes }, ...who };
  if (type === "reject") return { decision: { seq, decision: "deny", ...notes }, ...who };
  if (type !== "edit") return `${where} must be ${SHAPES}; got ${shown(value)}`;
  const edited = editedAction as { name?: unknown; args?: unknown } | null | undefined;
  if (typeof edited !== "object" || edited === null || !Object.hasOwn(edited, "args"))
    return `${where}: an edit needs editedAction: { args } with the arguments to run instead`;
  if (edited.name !== undefined && edited.name !== actionName(action))
    return `${where}: an edit cannot change which tool runs (editedAction.name is ${shown(edited.name)}); leave name out or give ${JSON.stringify(actionName(action))}`;
  return { decision: { seq, decision: "edit", args: edited.args, ...notes }, ...who };
}

/** A value as a problem shows it: JSON, clipped. */
function shown(value: unknown): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch {
    text = undefined;
  }
  if (text === undefined) return String(value);
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}
