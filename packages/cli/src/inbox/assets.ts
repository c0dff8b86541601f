import { SafeHtml } from "./html.js";

// The inbox's look: inline (with a per-response nonce), no build step. Its script is page-script.ts.

export const INBOX_STYLES = new SafeHtml(`
:root { color-scheme: light; --ink: #1d2330; --muted: #5f6b7a; --line: #dfe3ea; --paper: #ffffff; --wash: #f4f6f9;
  --green: #1a7f4b; --green-bg: #e4f5ec; --amber: #94600a; --amber-bg: #fdf3dc; --red: #b42318; --red-bg: #fdeceb;
  --blue: #2453c7; --violet: #6b3fb5; --violet-bg: #f0eafb; --cyan-bg: #e3f3f8; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink); background: var(--wash); }
a { color: var(--blue); text-decoration: none; } a:hover { text-decoration: underline; }
code, pre, .call { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; font-size: 13px; }
.top { display: flex; align-items: center; gap: 16px; padding: 12px 28px; background: var(--ink); color: #fff; }
.brand { color: #fff; font-weight: 600; font-size: 16px; } .logo { color: #7fb0ff; }
.live { font-size: 12px; padding: 2px 8px; border-radius: 999px; background: #39414f; color: #cfd6e0; }
.live.on { background: #1f5c3d; color: #d5f5e3; } .live.off { background: #6b2a24; color: #ffd9d4; }
.operator { margin-left: auto; font-size: 13px; color: #cfd6e0; }
.operator input { margin-left: 6px; padding: 4px 8px; border-radius: 6px; border: 1px solid #4a5262; background: #2a3140; color: #fff; width: 10em; }
main { max-width: 1100px; margin: 0 auto; padding: 20px 28px 48px; }
h1 { font-size: 22px; margin: 8px 0 16px; } h2 { font-size: 17px; margin: 28px 0 10px; }
.count { display: inline-block; min-width: 1.6em; padding: 0 8px; border-radius: 999px; background: var(--amber-bg); color: var(--amber); font-size: 15px; text-align: center; }
#notices { max-width: 1100px; margin: 0 auto; padding: 0 28px; }
.notice { margin: 14px 0 0; padding: 10px 14px; border-radius: 8px; border: 1px solid; white-space: pre-line; }
.notice.ok { background: var(--green-bg); border-color: #b6e2c9; color: #11522f; }
.notice.warn { background: var(--amber-bg); border-color: #f0d79b; color: #6b4507; }
.notice.error, .trouble { background: var(--red-bg); border-color: #f3c1bc; color: #7a1911; }
.trouble { padding: 10px 14px; border: 1px solid; border-radius: 8px; }
.card { background: var(--paper); border: 1px solid var(--line); border-left: 4px solid #e9b949; border-radius: 10px; padding: 16px 18px; margin: 0 0 16px; box-shadow: 0 1px 2px rgba(20,30,50,.05); }
.card-head { display: flex; flex-wrap: wrap; justify-content: space-between; gap: 8px; align-items: baseline; }
.call { font-size: 15px; font-weight: 600; } .seq, .meta { color: var(--muted); font-size: 13px; }
.label { margin: 12px 0 4px; font-size: 12px; text-transform: uppercase; letter-spacing: .04em; color: var(--muted); }
pre.args, pre.code, pre.value { margin: 0; padding: 10px 12px; background: #f7f8fb; border: 1px solid var(--line); border-radius: 6px; overflow: auto; }
pre.args { max-height: 16em; } pre.value { max-height: 12em; padding: 6px 8px; font-size: 12px; white-space: pre-wrap; word-break: break-word; }
pre.code { max-height: 28em; }
.so-far, .program { margin-top: 12px; overflow-x: auto; } .so-far summary, .program summary { cursor: pointer; color: var(--muted); font-size: 13px; }
.program pre.code { margin-top: 8px; font-size: 12px; }
table.log.compact { table-layout: fixed; }
table.log.compact th:nth-child(1) { width: 3.5em; } table.log.compact th:nth-child(2) { width: 11em; }
table.log.compact th:nth-child(3) { width: 7em; } table.log.compact th:nth-child(6) { width: 12em; }
table.log.compact code.value { display: block; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
td.call-name code, code.call { overflow-wrap: break-word; }
table { width: 100%; border-collapse: collapse; background: var(--paper); }
.so-far table { margin-top: 8px; }
th, td { text-align: left; padding: 6px 10px; border-bottom: 1px solid var(--line); vertical-align: top; font-size: 13px; }
th { font-size: 11px; text-transform: uppercase; letter-spacing: .04em; color: var(--muted); background: #fafbfc; }
table.runs, table.log:not(.compact) { border: 1px solid var(--line); border-radius: 8px; }
td.num { font-variant-numeric: tabular-nums; }
.badge { display: inline-block; padding: 1px 8px; border-radius: 999px; font-size: 12px; font-weight: 600; background: var(--wash); color: var(--muted); }
.badge.paused, .badge.pending { background: var(--amber-bg); color: var(--amber); }
.badge.completed, .badge.applied { background: var(--green-bg); color: var(--green); }
.badge.error, .badge.rejected, .badge.denied { background: var(--red-bg); color: var(--red); }
.badge.rolled_back, .badge.reverted { background: var(--violet-bg); color: var(--violet); }
.badge.running, .badge.executing { background: var(--cyan-bg); color: #17627a; }
.decision.approved { color: var(--green); font-weight: 600; } .decision.rejected { color: var(--red); font-weight: 600; }
.decision.edited { color: var(--blue); }
.reason { color: var(--muted); font-style: italic; } .waiting { color: var(--amber); font-weight: 600; }
.none, .empty, .when { color: var(--muted); } .failure { color: var(--red); }
.empty-state { padding: 24px; text-align: center; color: var(--muted); background: var(--paper); border: 1px dashed var(--line); border-radius: 10px; }
.waiting-count { font-weight: 600; }
.action { margin-top: 14px; padding: 12px 14px; border: 1px solid var(--line); border-radius: 8px; background: #fcfcfd; }
.action-head { display: flex; gap: 10px; align-items: baseline; }
.description { margin: 4px 0 0; color: var(--muted); }
form.decide { margin-top: 12px; }
form.decide .row { display: flex; flex-wrap: wrap; gap: 8px; align-items: center; }
form.decide .reason { flex: 1; min-width: 16em; padding: 8px 10px; border: 1px solid var(--line); border-radius: 6px; font: inherit; font-style: normal; color: var(--ink); }
label.grant { font-size: 13px; color: var(--muted); white-space: nowrap; }
label.grant input { width: 4.5em; margin: 0 4px; padding: 7px 6px; border: 1px solid var(--line); border-radius: 6px; font: inherit; }
details.edit { margin-top: 10px; } details.edit summary { cursor: pointer; color: var(--blue); font-size: 13px; }
textarea.args-editor { display: block; width: 100%; margin-top: 8px; padding: 8px 10px; border: 1px solid var(--line); border-radius: 6px; font: 13px/1.4 ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; color: var(--ink); resize: vertical; }
textarea.args-editor[aria-invalid="true"] { border-color: var(--red); background: #fffafa; outline-color: var(--red); }
ul.schema-problems { margin: 6px 0 0; padding-left: 20px; color: var(--red); font-size: 13px; } ul.schema-problems:empty { display: none; }
.edit-row { display: flex; gap: 12px; align-items: center; justify-content: space-between; margin-top: 8px; }
.schema-note { font-size: 12px; color: var(--muted); }
form.approve-all { margin-top: 14px; display: flex; flex-wrap: wrap; gap: 8px; justify-content: flex-end; align-items: center; }
.asked, .ran { display: flex; gap: 6px; align-items: baseline; } .asked { text-decoration: line-through; text-decoration-color: #c9ced6; color: var(--muted); }
.args-label { font-size: 11px; text-transform: uppercase; letter-spacing: .04em; color: var(--muted); min-width: 3.2em; }
.via-grant, .grant-given { color: var(--violet); font-size: 12px; }
button { font: inherit; font-weight: 600; padding: 8px 18px; border-radius: 6px; border: 1px solid transparent; cursor: pointer; }
button.approve { background: var(--green); color: #fff; } button.approve:hover { background: #146a3e; }
button.reject, button.deny, button.deny-all { background: var(--paper); color: var(--red); border-color: #efb8b2; } button.reject:hover, button.deny:hover, button.deny-all:hover { background: var(--red-bg); }
button.edit { background: var(--blue); color: #fff; } button.edit:disabled { background: #9aa7c4; cursor: not-allowed; }
button.approve-all { background: var(--paper); color: var(--green); border-color: #a9dbbf; } button.approve-all:hover { background: var(--green-bg); }
button:disabled { opacity: .55; cursor: progress; }
.crumbs { margin-bottom: 4px; font-size: 13px; }
.facts { display: grid; grid-template-columns: max-content 1fr; gap: 6px 16px; background: var(--paper); border: 1px solid var(--line); border-radius: 8px; padding: 12px 16px; }
.facts dt { color: var(--muted); } .facts dd { margin: 0; }
`);
