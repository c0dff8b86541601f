import type { ExecutionState, PendingAction } from "@codemode/core";
import type { ExecutionSummary } from "@codemode/core/operations";
import { pretty } from "../output/terminal.js";
import { INBOX_STYLES } from "./assets.js";
import { html, type SafeHtml } from "./html.js";
import { logTable } from "./log-table.js";
import type { PageContext } from "./page-context.js";
import { INBOX_SCRIPT } from "./page-script.js";
import { byRun, runCard } from "./run-card.js";
import { timeAgo } from "./time.js";

/** What every page needs to link, post and name the person deciding. */
export type { PageContext } from "./page-context.js";

export interface Notice {
  message: string;
  tone: "ok" | "warn" | "error";
}

export interface InboxListing {
  pending: Array<{ action: PendingAction; execution: ExecutionState | null }>;
  recent: ExecutionSummary[];
  /** More pending actions than shown. */
  more: boolean;
}

/** The whole document around a page's main content. */
export function layout(page: PageContext, heading: string, main: SafeHtml, notice?: Notice): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${heading} · ${page.title}</title>
<style nonce="${page.nonce}">${INBOX_STYLES}</style>
</head>
<body data-base="${page.base}">
<header class="top">
  <a class="brand" href="${page.base}/"><span class="logo" aria-hidden="true">◆</span> ${page.title}</a>
  <span id="live" class="live" title="Live updates">connecting…</span>
  <label class="operator">Deciding as <input id="operator" name="operator" value="${page.operator}" maxlength="80" autocomplete="name"></label>
</header>
<div id="notices" aria-live="polite">${notice ? html`<p class="notice ${notice.tone}" role="${notice.tone === "ok" ? "status" : "alert"}">${notice.message}</p>` : ""}</div>
<main>${main}</main>
<script nonce="${page.nonce}">${INBOX_SCRIPT}</script>
</body>
</html>`.value;
}

/** The inbox: calls waiting for approval, then recent executions. */
export function inboxMain(page: PageContext, listing: InboxListing, trouble?: string): SafeHtml {
  const cards = byRun(listing.pending).map(([executionId, items]) =>
    runCard(
      page,
      executionId,
      items.map((item) => item.action),
      items[0]?.execution ?? null,
      true,
    ),
  );
  return html`${trouble ? troubleBanner(trouble) : ""}
<section class="pending">
  <h1>Waiting for approval <span class="count" title="pending actions">${listing.pending.length}${listing.more ? "+" : ""}</span></h1>
  ${cards.length > 0 ? cards : html`<p class="empty-state">Nothing is waiting for approval. New pauses appear here by themselves.</p>`}
</section>
<section class="recent">
  <h2>Recent executions</h2>
  ${listing.recent.length > 0 ? runsTable(page, listing.recent) : html`<p class="empty">No executions yet.</p>`}
</section>`;
}

function runsTable(page: PageContext, runs: readonly ExecutionSummary[]): SafeHtml {
  const rows = runs.map(
    (run) => html`<tr data-execution="${run.id}">
  <td><a href="${page.base}/executions/${encodeURIComponent(run.id)}"><code>${run.id}</code></a></td>
  <td><span class="badge ${run.status}">${run.status}</span></td>
  <td>${run.connectors.join(", ")}</td>
  <td class="num">${run.passes}</td>
  <td>${timeAgo(run.createdAt)}</td>
  <td>${timeAgo(run.updatedAt)}</td>
  <td class="failure">${run.errorCode ?? ""}</td>
</tr>`,
  );
  return html`<table class="runs"><thead><tr><th>execution</th><th>status</th><th>connectors</th><th>passes</th><th>created</th><th>updated</th><th>error</th></tr></thead><tbody>${rows}</tbody></table>`;
}

/**
 * One execution's audit trail: its record, the actions pending now (with their forms), every
 * call with who decided, the code. `pending` are the run's pending actions as the runtime lists
 * them (with each tool's description and schema).
 */
export function executionMain(
  page: PageContext,
  execution: ExecutionState,
  pending: readonly PendingAction[],
): SafeHtml {
  const actions = execution.status === "paused" ? pending : [];
  return html`<nav class="crumbs"><a href="${page.base}/">← Inbox</a></nav>
<h1 class="execution-title">Execution <code>${execution.id}</code> <span class="badge ${execution.status}" data-status="${execution.status}">${execution.status}</span></h1>
<dl class="facts">
  <dt>created</dt><dd>${timeAgo(execution.createdAt)}</dd>
  <dt>updated</dt><dd>${timeAgo(execution.updatedAt)}</dd>
  <dt>connectors</dt><dd>${execution.connectors.join(", ") || "none"}</dd>
  ${execution.status === "completed" ? html`<dt>result</dt><dd><pre class="value">${pretty(execution.result)}</pre></dd>` : ""}
  ${execution.error ? html`<dt>error</dt><dd class="failure">${execution.errorCode ? `${execution.errorCode}: ` : ""}${execution.error}</dd>` : ""}
</dl>
${actions.length > 0 ? runCard(page, execution.id, actions, execution, false) : ""}
<h2>Audit trail</h2>
${logTable(execution.log, false)}
${execution.logs?.length ? html`<h2>Console</h2><pre class="code">${execution.logs.join("\n")}</pre>` : ""}
<h2>Code</h2>
<pre class="code">${execution.code}</pre>`;
}

export function troubleBanner(message: string): SafeHtml {
  return html`<p class="trouble" role="alert">${message}</p>`;
}

/** A page with only a message (not found, refused). */
export function messageMain(page: PageContext, heading: string, message: string): SafeHtml {
  return html`<nav class="crumbs"><a href="${page.base}/">← Inbox</a></nav><h1>${heading}</h1><p>${message}</p>`;
}
