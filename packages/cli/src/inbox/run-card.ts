import type { ExecutionState, PendingAction } from "@codemode/core";
import { pretty } from "../output/terminal.js";
import { FORM_LIMITS } from "./decide-form.js";
import { html, INVISIBLE, type SafeHtml } from "./html.js";
import { breakableName, logTable } from "./log-table.js";
import type { PageContext } from "./page-context.js";
import { timeAgo } from "./time.js";

/**
 * One paused run (R-AP-8): every action it waits on, each with its tool's description, its
 * arguments and its own decision form (approve, deny, or edit the arguments), the calls made
 * so far, and — when more than one waits — one button that approves all of them.
 */
export function runCard(
  page: PageContext,
  executionId: string,
  actions: readonly PendingAction[],
  execution: ExecutionState | null,
  linkToTrail: boolean,
): SafeHtml {
  const log = execution?.log ?? [];
  const done = log.filter((entry) => entry.state !== "pending").length;
  const count = actions.length;
  // A program may leave thousands pending at once (R-AP-8): the card shows the first ones, each
  // with its form, and "Approve all" covers exactly the ones shown.
  const shown = actions.slice(0, ACTIONS_SHOWN);
  const hidden = count - shown.length;
  return html`<article class="card" id="run-${executionId}" data-execution="${executionId}">
  <div class="card-head">
    <div class="what"><span class="badge paused">paused</span> <span class="waiting-count">${count} action${count === 1 ? "" : "s"} waiting</span></div>
    <div class="meta">${execution?.requestedBy ? html`asked by <span class="who">${execution.requestedBy}</span> · ` : ""}waiting ${execution ? timeAgo(execution.updatedAt) : ""}${linkToTrail ? html` · <a href="${page.base}/executions/${encodeURIComponent(executionId)}" title="Audit trail">${executionId}</a>` : ""}</div>
  </div>
  ${execution ? programOf(execution.code) : ""}
  <details class="so-far"${done > 0 ? " open" : ""}><summary>Call log so far · ${done} earlier call${done === 1 ? "" : "s"}</summary>${logTable(log, true)}</details>
  ${shown.map((action) => actionSection(page, action))}
  ${hidden > 0 ? html`<p class="none">${hidden} more pending action${hidden === 1 ? "" : "s"} of this run, shown once these are decided (or decide them with <code>codemode decide</code>).</p>` : ""}
  ${shown.length > 1 ? approveAllForm(page, executionId, shown, hidden > 0) : ""}
</article>`;
}

/** Characters of a program a card shows; the audit trail has it whole. */
const PROGRAM_SHOWN = 20_000;

/** The program the run runs, what every decision is about: folded; escaped, invisible characters shown (html.ts). */
function programOf(code: string): SafeHtml {
  const lines = code.split("\n").length;
  const text =
    code.length > PROGRAM_SHOWN
      ? `${code.slice(0, PROGRAM_SHOWN)}\n… [${code.length - PROGRAM_SHOWN} more characters]`
      : code;
  return html`<details class="program"><summary>The program · ${lines} line${lines === 1 ? "" : "s"}</summary><pre class="code">${text}</pre></details>`;
}

/** Actions of one run a card shows at once. */
const ACTIONS_SHOWN = 50;

function actionSection(page: PageContext, action: PendingAction): SafeHtml {
  return html`<section class="action" id="action-${action.executionId}-${action.seq}" data-seq="${action.seq}">
  <div class="action-head"><code class="call">${breakableName(`${action.connector}.${action.method}`)}</code> <span class="seq">seq ${action.seq}</span></div>
  ${action.description ? html`<p class="description">${action.description}</p>` : ""}
  <div class="label">Arguments</div>
  <pre class="args">${pretty(action.args)}</pre>
  ${decisionForm(page, action)}
</section>`;
}

function decideAction(page: PageContext, executionId: string): string {
  return `${page.base}/executions/${encodeURIComponent(executionId)}/decide`;
}

function decisionForm(page: PageContext, action: PendingAction): SafeHtml {
  const call = `${action.connector}.${action.method}`;
  // Keyed by its pause: a call asked again gets a new form, and the old one's answer decides nothing.
  return html`<form class="decide" method="post" action="${decideAction(page, action.executionId)}" data-decide data-key="${action.executionId}:${action.pauseId ?? action.seq}">
    <input type="hidden" name="csrf" value="${page.formToken}">
    <input type="hidden" name="seq" value="${action.seq}">${
      action.pauseId
        ? html`
    <input type="hidden" name="pause" value="${action.pauseId}">`
        : ""
    }
    <input type="hidden" name="by" value="${page.operator}">
    <div class="row">
      <input class="reason" name="reason" maxlength="${FORM_LIMITS.reason}" placeholder="Reason (optional, kept in the audit trail)" aria-label="Reason">
      <label class="grant" title="On Approve or Edit: up to this many later calls of ${call} in this run are approved as they come">also approve the next <input type="number" name="grant" min="1" max="${FORM_LIMITS.grant}" step="1" inputmode="numeric" placeholder="—" aria-label="Grant: later calls approved as they come"> such calls</label>
      <button class="approve" name="decision" value="approve">Approve</button>
      <button class="deny" name="decision" value="deny">Deny</button>
    </div>
    ${argumentsEditor(action)}
  </form>`;
}

/**
 * The edit form: the arguments as JSON, checked against the tool's schema by the page as the
 * person types (sending stays off while they do not parse or do not fit); the runtime checks
 * again. Arguments too long to send back are not offered for editing.
 */
function argumentsEditor(action: PendingAction): SafeHtml {
  // Invisible and direction characters are written as JSON escapes: the editor shows them, and
  // a value sent back unchanged is the same value (HTML escaping would replace them with a mark).
  const text =
    action.args === undefined ? "" : (JSON.stringify(action.args, null, 2) ?? "").replace(INVISIBLE, jsonEscape);
  if (text.length > FORM_LIMITS.argsChars)
    return html`<p class="none">The arguments are too long to edit here (over ${FORM_LIMITS.argsChars.toLocaleString("en")} characters).</p>`;
  const schema = action.inputSchema ? JSON.stringify(action.inputSchema) : undefined;
  const rows = Math.min(16, Math.max(3, text.split("\n").length + 1));
  return html`<details class="edit"><summary>Edit the arguments</summary>
      <textarea class="args-editor" name="args" rows="${rows}" spellcheck="false" autocomplete="off" maxlength="${FORM_LIMITS.argsChars}" aria-label="Arguments as JSON"${schema ? html` data-schema="${schema}"` : ""}>${text}</textarea>
      <ul class="schema-problems" aria-live="polite"></ul>
      <div class="edit-row">
        <span class="schema-note">${schema ? "Checked against the tool's input schema as you type; the server checks again." : "The tool has no input schema here; the server checks what it can."}</span>
        <button class="edit" name="decision" value="edit">Run with these arguments</button>
      </div>
    </details>`;
}

function approveAllForm(
  page: PageContext,
  executionId: string,
  actions: readonly PendingAction[],
  more: boolean,
): SafeHtml {
  const label = more ? `Approve the ${actions.length} shown` : `Approve all ${actions.length} pending of this run`;
  const denyLabel = more ? `Deny the ${actions.length} shown` : `Deny all ${actions.length}`;
  const seqs = actions.map((action) => action.seq).join(",");
  const pauses = actions.every((action) => action.pauseId) ? actions.map((action) => action.pauseId).join(",") : "";
  return html`<form class="decide approve-all" method="post" action="${decideAction(page, executionId)}" data-decide data-key="${executionId}:all:${pauses || seqs}">
    <input type="hidden" name="csrf" value="${page.formToken}">
    <input type="hidden" name="seqs" value="${seqs}">${
      pauses
        ? html`
    <input type="hidden" name="pauses" value="${pauses}">`
        : ""
    }
    <input type="hidden" name="by" value="${page.operator}">
    <input class="reason" name="reason" maxlength="${FORM_LIMITS.reason}" placeholder="Reason (optional; a denied call is told it)" aria-label="Reason for all">
    <button class="approve-all" name="decision" value="approve" title="One decision on seqs ${seqs}: refused whole if any of them is no longer pending">${label}</button>
    <button class="deny-all" name="decision" value="deny" title="One decision on seqs ${seqs}: each denied call rejects inside the program; refused whole if any of them is no longer pending">${denyLabel}</button>
  </form>`;
}

/** Pending actions grouped by run, runs in the order they first appear, actions by seq. */
export function byRun<T extends { action: PendingAction }>(items: readonly T[]): Array<[string, T[]]> {
  const runs = new Map<string, T[]>();
  for (const item of items) {
    const list = runs.get(item.action.executionId) ?? [];
    list.push(item);
    runs.set(item.action.executionId, list);
  }
  for (const list of runs.values()) list.sort((left, right) => left.action.seq - right.action.seq);
  return [...runs.entries()];
}

function jsonEscape(character: string): string {
  return `\\u${character.charCodeAt(0).toString(16).padStart(4, "0")}`;
}
