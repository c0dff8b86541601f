import type { LogEntry } from "@codemode/core";
import { abbreviate, pretty } from "../output/terminal.js";
import { html, type SafeHtml } from "./html.js";
import { timeAgo } from "./time.js";

/**
 * A call log as a table. `compact` (the inbox cards) abbreviates values to one line; the audit
 * trail shows them pretty-printed in scrollable blocks, with who decided, when and why: denied
 * calls, edited ones (what the program asked, and what ran) and grants (R-AP-9).
 */
export function logTable(log: readonly LogEntry[], compact: boolean): SafeHtml {
  if (log.length === 0) return html`<p class="empty">No calls yet.</p>`;
  const rows = log.map(
    (entry) => html`<tr class="entry state-${entry.state}">
  <td class="num">${entry.seq}</td>
  <td class="call-name">${callName(entry)}</td>
  <td><span class="badge ${entry.state}">${entry.state}</span></td>
  <td>${entry.requestedArgs !== undefined ? edited(entry, compact) : value(entry.args, compact)}</td>
  <td>${entry.error !== undefined ? html`<span class="failure">${entry.error}</span>` : value(entry.result, compact)}</td>
  <td>${decision(entry)}</td>
  ${compact ? "" : html`<td class="when">${timeAgo(entry.startedAt)}</td>`}
</tr>`,
  );
  return html`<table class="log${compact ? " compact" : ""}">
<thead><tr><th>seq</th><th>call</th><th>state</th><th>arguments</th><th>result</th><th>decision</th>${compact ? "" : html`<th>started</th>`}</tr></thead>
<tbody>${rows}</tbody>
</table>`;
}

/** The whole `connector.method`, never cut: it wraps, preferably after the dot (arguments may be abbreviated, the name is not). */
function callName(entry: LogEntry): SafeHtml {
  return html`<code>${breakableName(`${entry.connector}.${entry.method}`)}</code>`;
}

/**
 * A call's name that wraps between its words, never inside one: a break opportunity after each
 * `.` and `_` (`payments_eu.create_refund` wraps as `payments_` `eu.` `create_` `refund`); only a
 * single word wider than its column is broken (the styles' `overflow-wrap: break-word`).
 */
export function breakableName(name: string): SafeHtml {
  return html`${name.split(/(?<=[._])/).map((part, index) => (index === 0 ? part : html`<wbr>${part}`))}`;
}

function value(data: unknown, compact: boolean): SafeHtml {
  if (data === undefined) return html`<span class="none">—</span>`;
  if (compact) return html`<code class="value" title="${abbreviate(data, 2_000)}">${abbreviate(data, 60)}</code>`;
  return html`<pre class="value">${pretty(data)}</pre>`;
}

/** An edited call: the arguments the program asked for, then those that ran. */
function edited(entry: LogEntry, compact: boolean): SafeHtml {
  return html`<div class="asked"><span class="args-label">asked</span> ${value(entry.requestedArgs, compact)}</div><div class="ran"><span class="args-label">ran</span> ${value(entry.args, compact)}</div>`;
}

/** The decision's word: approve and edit run the call, deny refuses it; `reject` (no kind) ended the run. */
function decisionWord(made: NonNullable<LogEntry["decision"]>): [cssClass: string, word: string] {
  if (made.decision === "edit") return ["approved edited", "edited"];
  if (made.decision === "deny") return ["rejected denied", "denied"];
  return made.approved ? ["approved", "approved"] : ["rejected", "rejected"];
}

function decision(entry: LogEntry): SafeHtml {
  if (entry.decision) {
    const { by, reason, at, grant, viaGrant } = entry.decision;
    const [cssClass, word] = decisionWord(entry.decision);
    const through =
      viaGrant !== undefined ? html` <span class="via-grant">through the grant of seq ${viaGrant}</span>` : "";
    const gave = grant
      ? html`<div class="grant-given">granted the next ${grant.calls} call${grant.calls === 1 ? "" : "s"} of this method</div>`
      : "";
    return html`<span class="decision ${cssClass}">${word}</span>${through} by <strong>${by ?? "someone"}</strong> ${timeAgo(at)}${reason ? html`<div class="reason">“${reason}”</div>` : ""}${gave}`;
  }
  if (entry.state === "pending") return html`<span class="waiting">waiting for approval</span>`;
  return entry.requiresApproval ? html`<span class="none">needs approval</span>` : html`<span class="none">—</span>`;
}
