import { clipMessage } from "../../log/durable-value.js";
import type { DecisionKind } from "../../outcome.js";

/** One decision on one pending call (R-AP-9). */
export interface Decision {
  seq: number;
  decision: DecisionKind;
  /** For `edit`: the arguments that run instead of the program's (checked by the tool's schema). */
  args?: unknown;
  /** Why; recorded on the entry, and the message of a denial. Overrides the input's `reason`. */
  reason?: string;
  /** On `approve` or `edit`: approve up to `calls` further calls of the same method in this execution. */
  grant?: { calls: number };
  /**
   * The pause this decision answers (`PendingAction.pauseId`), when the one who decided saw it:
   * a decision for an earlier pause of the call (asked again since) is refused, NOT_PAUSED.
   */
  pauseId?: string;
}

export interface DecideInput {
  executionId: string;
  decisions: Decision[];
  /** Who decided, for the audit trail (R-AP-7). */
  by?: string;
  /** Why, for every decision that gives none of its own. */
  reason?: string;
}

/** The most decisions one call takes (as many as a run may have pending), and the largest grant. */
export const MAX_DECISIONS = 10_000;
export const MAX_GRANT_CALLS = 10_000;

const KINDS: ReadonlySet<unknown> = new Set(["approve", "deny", "edit"]);
const FIELDS: ReadonlySet<string> = new Set(["seq", "decision", "args", "reason", "grant", "pauseId"]);

/** What a check of hostile input answers: the checked value, or the problem in one sentence. */
export type Checked<T> = { ok: true; value: T } | { ok: false; problem: string };

function refused(problem: string): { ok: false; problem: string } {
  return { ok: false, problem };
}

/** Decisions as checked: the shape is right, every seq once, texts clipped to the message limit. */
export interface CheckedDecisions {
  decisions: Decision[];
  by?: string;
  reason?: string;
}

/**
 * Checks a `decide` input as hostile input (it may come from a browser or an MCP client):
 * the problem in one sentence, or the decisions to apply. Whether each seq is pending, and whether
 * edited arguments fit the tool, is checked against the execution afterwards.
 */
export function checkDecisions(input: DecideInput): Checked<CheckedDecisions> {
  const list: unknown = input.decisions;
  if (!Array.isArray(list) || list.length === 0) return refused("decisions must be a non-empty array");
  if (list.length > MAX_DECISIONS) return refused(`at most ${MAX_DECISIONS} decisions at once (got ${list.length})`);
  if (input.by !== undefined && typeof input.by !== "string") return refused("by must be a string");
  if (input.reason !== undefined && typeof input.reason !== "string") return refused("reason must be a string");
  const decisions: Decision[] = [];
  const seen = new Set<number>();
  for (const [index, item] of list.entries()) {
    const one = checkOne(item, `decisions[${index}]`);
    if (!one.ok) return one;
    const checked = one.value;
    if (seen.has(checked.seq)) return refused(`decisions[${index}]: seq ${checked.seq} is decided twice`);
    seen.add(checked.seq);
    decisions.push(checked);
  }
  const checked: CheckedDecisions = { decisions };
  if (input.by) checked.by = clipMessage(input.by);
  if (input.reason) checked.reason = clipMessage(input.reason);
  return { ok: true, value: checked };
}

function checkOne(item: unknown, where: string): Checked<Decision> {
  if (typeof item !== "object" || item === null || Array.isArray(item)) return refused(`${where} must be an object`);
  const fields = item as Record<string, unknown>;
  const unknown = Object.keys(fields).find((key) => !FIELDS.has(key));
  if (unknown !== undefined) return refused(`${where} has an unknown field ${JSON.stringify(unknown.slice(0, 40))}`);
  const { seq, decision, reason, grant, pauseId } = fields;
  if (!Number.isSafeInteger(seq) || (seq as number) < 0)
    return refused(`${where}.seq must be a whole number of at least 0`);
  if (!KINDS.has(decision)) return refused(`${where}.decision must be "approve", "deny" or "edit"`);
  const hasArgs = Object.hasOwn(fields, "args");
  if (decision === "edit" && !hasArgs) return refused(`${where}: an edit needs args`);
  if (decision !== "edit" && hasArgs) return refused(`${where}: only an edit takes args`);
  if (reason !== undefined && typeof reason !== "string") return refused(`${where}.reason must be a string`);
  if (pauseId !== undefined && (typeof pauseId !== "string" || pauseId.length > 40))
    return refused(`${where}.pauseId must be a pause id string (PendingAction.pauseId)`);
  const checked: Decision = { seq: seq as number, decision: decision as Decision["decision"] };
  if (hasArgs) checked.args = fields.args;
  if (reason) checked.reason = clipMessage(reason as string);
  if (typeof pauseId === "string") checked.pauseId = pauseId;
  if (grant !== undefined) {
    if (decision === "deny") return refused(`${where}: a denial cannot give a grant`);
    const calls = (grant as { calls?: unknown } | null)?.calls;
    if (typeof grant !== "object" || grant === null || !Number.isSafeInteger(calls) || (calls as number) < 1)
      return refused(`${where}.grant must be { calls: n } with n a whole number of at least 1`);
    if ((calls as number) > MAX_GRANT_CALLS) return refused(`${where}.grant.calls must be at most ${MAX_GRANT_CALLS}`);
    checked.grant = { calls: calls as number };
  }
  return { ok: true, value: checked };
}
