import { SafeHtml } from "./html.js";
import { SCHEMA_CHECK_SOURCE } from "./schema-check.js";

/**
 * The inbox's script, inline with a per-response nonce: decisions posted without leaving the
 * page, live refreshes that keep what a person typed, and the edit form's check against the
 * tool's schema as they type (the functions of schema-check.ts, by their own text).
 */
export const INBOX_SCRIPT = new SafeHtml(`
(() => {
  ${SCHEMA_CHECK_SOURCE}

  const base = document.body.dataset.base || "";
  const notices = document.getElementById("notices");
  const live = document.getElementById("live");
  const operator = document.getElementById("operator");
  const remembered = localStorage.getItem("codemode-operator");
  if (remembered) operator.value = remembered;
  operator.addEventListener("change", () => localStorage.setItem("codemode-operator", operator.value.trim()));

  const ago = (at) => {
    const seconds = Math.max(0, Math.round((Date.now() - at) / 1000));
    if (seconds < 5) return "just now";
    if (seconds < 60) return seconds + " s ago";
    if (seconds < 3600) return Math.floor(seconds / 60) + " min ago";
    if (seconds < 86400) return Math.floor(seconds / 3600) + " h ago";
    return Math.floor(seconds / 86400) + " d ago";
  };
  const ages = () => { for (const time of document.querySelectorAll("time[data-at]")) time.textContent = ago(Number(time.dataset.at)); };
  setInterval(ages, 15000);

  const notice = (message, tone) => {
    const line = document.createElement("p");
    line.className = "notice " + tone;
    line.setAttribute("role", tone === "ok" ? "status" : "alert");
    line.textContent = message;
    notices.prepend(line);
    while (notices.children.length > 4) notices.lastElementChild.remove();
  };

  // The edit form: what keeps the arguments from being sent, shown as the person types.
  const problemsOf = (editor) => {
    let value;
    try {
      value = JSON.parse(editor.value);
    } catch (error) {
      return ["Not JSON: " + error.message];
    }
    let schema;
    try {
      schema = editor.dataset.schema ? JSON.parse(editor.dataset.schema) : undefined;
    } catch {
      schema = undefined;
    }
    return schema === undefined ? [] : schemaProblems(value, schema, 20);
  };
  const checkEditor = (editor) => {
    const problems = problemsOf(editor);
    const list = editor.parentElement.querySelector(".schema-problems");
    list.replaceChildren(...problems.map((problem) => {
      const item = document.createElement("li");
      item.textContent = problem;
      return item;
    }));
    editor.setAttribute("aria-invalid", problems.length > 0 ? "true" : "false");
    const send = editor.form.querySelector("button.edit");
    if (send) send.disabled = problems.length > 0;
    return problems;
  };
  const checkEditors = () => { for (const editor of document.querySelectorAll("textarea.args-editor")) checkEditor(editor); };
  document.addEventListener("input", (event) => {
    if (event.target instanceof HTMLTextAreaElement && event.target.classList.contains("args-editor")) checkEditor(event.target);
  });

  // What a person typed or opened survives a refresh of the page's content, and a refresh that
  // came while its run was briefly not paused (another action of it running): kept for the page's life.
  const KEPT = ["reason", "grant", "args"];
  const kept = new Map();
  const keep = (main) => {
    for (const form of main.querySelectorAll("form[data-key]")) {
      const fields = {};
      for (const name of KEPT) {
        const field = form.elements.namedItem(name);
        if (field && field.value !== field.defaultValue) fields[name] = field.value;
      }
      const details = form.querySelector("details");
      kept.set(form.dataset.key, { fields, open: details ? details.open : false });
    }
    const active = document.activeElement;
    const focus = active && active.form && active.form.dataset.key
      ? { key: active.form.dataset.key, name: active.name, start: active.selectionStart, end: active.selectionEnd }
      : undefined;
    return { kept, focus };
  };
  const restore = (main, { kept, focus }) => {
    for (const form of main.querySelectorAll("form[data-key]")) {
      const state = kept.get(form.dataset.key);
      if (!state) continue;
      for (const [name, value] of Object.entries(state.fields)) {
        const field = form.elements.namedItem(name);
        if (field) field.value = value;
      }
      const details = form.querySelector("details");
      if (details && state.open) details.open = true;
      if (focus && focus.key === form.dataset.key && focus.name) {
        const field = form.elements.namedItem(focus.name);
        if (field && field.focus) {
          field.focus();
          if (typeof focus.start === "number" && field.setSelectionRange) field.setSelectionRange(focus.start, focus.end);
        }
      }
    }
  };

  let refreshing = null;
  let again = false;
  const refresh = async () => {
    if (refreshing) { again = true; return refreshing; }
    refreshing = (async () => {
      do {
        again = false;
        const url = new URL(location.href);
        url.searchParams.delete("notice");
        url.searchParams.delete("tone");
        url.searchParams.set("fragment", "1");
        const response = await fetch(url, { headers: { accept: "text/html" } }).catch(() => null);
        if (!response || !response.ok) return;
        const main = document.querySelector("main");
        const state = keep(main);
        main.innerHTML = await response.text();
        restore(main, state);
        checkEditors();
        ages();
      } while (again);
    })().finally(() => { refreshing = null; });
    return refreshing;
  };

  document.addEventListener("submit", async (event) => {
    const form = event.target;
    if (!(form instanceof HTMLFormElement) || !form.hasAttribute("data-decide")) return;
    event.preventDefault();
    const body = new URLSearchParams(new FormData(form, event.submitter));
    const decision = body.get("decision");
    const editor = form.querySelector("textarea.args-editor");
    // Arguments that do not parse or do not fit the schema are never sent.
    if (decision === "edit" && (!editor || checkEditor(editor).length > 0)) return;
    if (decision !== "edit") body.delete("args");
    if (decision === "deny" || !body.get("grant")) body.delete("grant");
    if (operator.value.trim()) body.set("by", operator.value.trim());
    for (const button of form.querySelectorAll("button")) button.disabled = true;
    try {
      const response = await fetch(form.action, { method: "POST", body, headers: { accept: "application/json" } });
      const text = await response.text();
      let answer = null;
      try { answer = JSON.parse(text); } catch { answer = null; }
      if (answer && answer.message) notice(answer.message, answer.tone || (response.ok ? "ok" : "error"));
      else notice(text.trim() || "Refused (" + response.status + ")", "error");
    } catch (error) {
      notice("The inbox could not be reached: " + error.message, "error");
    } finally {
      for (const button of form.querySelectorAll("button")) button.disabled = false;
      if (editor) checkEditor(editor);
    }
    await refresh();
  });

  checkEditors();
  const source = new EventSource(base + "/events");
  source.addEventListener("open", () => { live.textContent = "live"; live.className = "live on"; });
  source.addEventListener("error", () => { live.textContent = "reconnecting…"; live.className = "live off"; });
  source.addEventListener("changed", () => refresh());
  source.addEventListener("trouble", (event) => { live.textContent = "store unreachable"; live.className = "live off"; live.title = event.data; });
  source.addEventListener("recovered", () => { live.textContent = "live"; live.className = "live on"; refresh(); });
})();
`);
