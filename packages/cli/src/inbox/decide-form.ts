import type { Decision } from "@codemode/core";

/** The most a form may carry: what the page's inputs allow, so only a forged request meets them. */
export const FORM_LIMITS = {
  reason: 500,
  by: 80,
  /** Edited arguments, as JSON text. */
  argsChars: 65_536,
  grant: 10_000,
  seqs: 1_000,
} as const;

/** A decision as the form asked for it, checked: `decide` goes through `runtime.decide`, `reject` ends the run. */
export type DecisionRequest =
  | { kind: "decide"; executionId: string; decisions: Decision[]; by: string; reason?: string }
  | { kind: "reject"; executionId: string; seq: number; by: string; reason?: string };

const KINDS = new Set(["approve", "deny", "edit", "reject"]);
const SEQ = /^\d{1,15}$/;

/**
 * Reads a decision form as hostile input (R-AP-9): the problem in one sentence, or the request.
 *
 * - `decision`: `approve`, `deny`, `edit`, or `reject` (ends the run, as `codemode reject` does);
 * - `seq`: the action the person saw; or `seqs` ("0,1"), with `approve` or `deny`: every pending
 *   action of the run the page showed, decided in one decision (each must still be pending);
 * - `pause` (with `seq`) or `pauses` (with `seqs`, in the same order): the pauses the page showed
 *   (`PendingAction.pauseId`); a call asked again since is not decided by this form (R-AP-9);
 * - `args`: for `edit`, the arguments to run instead, as JSON (ignored otherwise: a form
 *   without the page's script sends its editor along with every button);
 * - `grant`: on `approve` or `edit` of one action, approve up to that many later calls of the method;
 * - `reason`, `by`: for the audit trail (`by` defaults to the inbox's operator).
 *
 * Whether each seq is pending, and whether the arguments fit the tool, the runtime checks.
 */
export function readDecisionForm(
  form: Readonly<Record<string, string>>,
  executionId: string,
  operator: string,
): DecisionRequest | { problem: string } {
  const decision = form.decision ?? "";
  if (!KINDS.has(decision)) return { problem: 'A decision needs "decision": approve, deny, edit or reject.' };
  const reason = (form.reason ?? "").trim();
  if (reason.length > FORM_LIMITS.reason) return { problem: `The reason is over ${FORM_LIMITS.reason} characters.` };
  const by = (form.by ?? "").trim();
  if (by.length > FORM_LIMITS.by) return { problem: `The name is over ${FORM_LIMITS.by} characters.` };
  const who = { executionId, by: by || operator || "inbox", ...(reason ? { reason } : {}) };
  const seqs = seqsOf(form);
  if (typeof seqs === "string") return { problem: seqs };
  if (seqs.length > 1 && decision !== "approve" && decision !== "deny")
    return { problem: '"seqs" goes with "approve" or "deny" only.' };
  const pauses = pausesOf(form, seqs);
  if (typeof pauses === "string") return { problem: pauses };
  const grant = grantOf(form.grant);
  if (typeof grant === "string") return { problem: grant };
  if (grant !== undefined && (seqs.length > 1 || (decision !== "approve" && decision !== "edit")))
    return { problem: "A grant goes with approving or editing one action." };
  const [seq = 0] = seqs;
  if (decision === "reject") return { kind: "reject", seq, ...who };
  const one: Decision = {
    seq,
    decision: decision as Decision["decision"],
    ...(grant ? { grant: { calls: grant } } : {}),
    ...(pauses?.[0] ? { pauseId: pauses[0] } : {}),
  };
  if (decision === "edit") {
    const args = argsOf(form.args);
    if (typeof args === "object" && args !== null && "problem" in args) return args;
    one.args = (args as { value: unknown }).value;
  }
  const decisions =
    seqs.length > 1
      ? seqs.map((each, index) => ({
          seq: each,
          decision: decision as "approve" | "deny",
          ...(pauses?.[index] ? { pauseId: pauses[index] } : {}),
        }))
      : [one];
  return { kind: "decide", decisions, ...who };
}

/** `seq` or `seqs`, exactly one of them, as whole numbers; a list without repeats. */
function seqsOf(form: Readonly<Record<string, string>>): number[] | string {
  const hasOne = form.seq !== undefined && form.seq !== "";
  const hasList = form.seqs !== undefined && form.seqs !== "";
  if (hasOne === hasList)
    return 'A decision needs the "seq" of the action (or "seqs", to approve every one the page showed).';
  const parts = hasOne ? [form.seq ?? ""] : (form.seqs ?? "").split(",");
  if (parts.length > FORM_LIMITS.seqs) return `At most ${FORM_LIMITS.seqs} actions at once.`;
  const seqs: number[] = [];
  for (const part of parts) {
    const text = part.trim();
    const seq = Number(text);
    if (!SEQ.test(text) || !Number.isSafeInteger(seq))
      return `"${text.slice(0, 20)}" is not the seq of an action (a whole number).`;
    if (seqs.includes(seq)) return `seq ${seq} is given twice.`;
    seqs.push(seq);
  }
  return seqs;
}

/** `pause` or `pauses`: a pause id per seq (`<seq>.<times asked>`), in the seqs' order; none for a form without them. */
function pausesOf(form: Readonly<Record<string, string>>, seqs: readonly number[]): string[] | undefined | string {
  const text = seqs.length > 1 ? form.pauses : form.pause;
  if (text === undefined || text === "") return undefined;
  const pauses = text.split(",").map((part) => part.trim());
  if (pauses.length !== seqs.length) return "The pauses do not match the actions.";
  for (const [index, pause] of pauses.entries())
    if (!new RegExp(`^${seqs[index]}\\.[1-9]\\d{0,8}$`).test(pause))
      return `"${pause.slice(0, 20)}" is not the pause of seq ${seqs[index]}.`;
  return pauses;
}

/** The grant's count: absent or empty for none, else a whole number from 1 to the limit. */
function grantOf(text: string | undefined): number | undefined | string {
  const trimmed = (text ?? "").trim();
  if (trimmed === "") return undefined;
  const calls = Number(trimmed);
  if (!/^\d{1,6}$/.test(trimmed) || calls < 1 || calls > FORM_LIMITS.grant)
    return `The grant must be a whole number from 1 to ${FORM_LIMITS.grant} (calls approved as they come).`;
  return calls;
}

function argsOf(text: string | undefined): { value: unknown } | { problem: string } {
  if (text === undefined || text.trim() === "") return { problem: 'An edit needs "args": the arguments as JSON.' };
  if (text.length > FORM_LIMITS.argsChars)
    return { problem: `The edited arguments are over ${FORM_LIMITS.argsChars.toLocaleString("en")} characters.` };
  try {
    return { value: JSON.parse(text) };
  } catch (error) {
    return { problem: `The edited arguments are not JSON: ${(error as Error).message}` };
  }
}
