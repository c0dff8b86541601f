// The chat page: the AI SDK's own chat client (AbstractChat, what useChat wraps), loaded from
// node_modules through the import map the server writes, with a small state holder that renders.
import { AbstractChat, DefaultChatTransport, lastAssistantMessageIsCompleteWithApprovalResponses } from "ai";

/** The ChatState that useChat keeps in React state; here it re-renders the page. */
class PageChatState {
  #messages = [];
  #status = "ready";
  #error;
  snapshot = (value) => structuredClone(value);
  get messages() {
    return this.#messages;
  }
  set messages(messages) {
    this.#messages = [...messages];
    scheduleRender();
  }
  get status() {
    return this.#status;
  }
  set status(status) {
    this.#status = status;
    scheduleRender();
  }
  get error() {
    return this.#error;
  }
  set error(error) {
    this.#error = error;
    scheduleRender();
  }
  pushMessage = (message) => {
    this.messages = [...this.#messages, message];
  };
  popMessage = () => {
    this.messages = this.#messages.slice(0, -1);
  };
  replaceMessage = (index, message) => {
    this.messages = this.#messages.map((existing, at) => (at === index ? message : existing));
  };
}

class PageChat extends AbstractChat {
  constructor(init) {
    super({ ...init, state: new PageChatState() });
  }
}

const chat = new PageChat({
  transport: new DefaultChatTransport({ api: "/api/chat" }),
  // After Approve / Reject, send the answer right away, as useChat apps do.
  sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
});

// --- rendering -------------------------------------------------------------------------------------
const list = document.querySelector("#messages");
const status = document.querySelector("#status");
let renderQueued = false;
function scheduleRender() {
  if (renderQueued) return;
  renderQueued = true;
  queueMicrotask(() => {
    renderQueued = false;
    render();
  });
}

/** The reason without the trailing `[codemode execution … seq 2.1,3.1 sig …]` marker (approvalReasonText on the server). */
function readableReason(reason) {
  return (reason ?? "").replace(
    /\s*\[codemode execution [A-Za-z0-9_-]+ seq \d+(?:\.\d+)?(?:,\d+(?:\.\d+)?)*(?: sig [A-Za-z0-9_-]+)?\]\s*$/,
    "",
  );
}

function element(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  node.append(...children.filter((child) => child !== undefined));
  return node;
}

function describeOutput(output) {
  if (output?.status === "completed")
    return ["done", "Done", element("pre", { "data-testid": "result" }, JSON.stringify(output.result, null, 2))];
  if (output?.status === "paused") {
    const action = output.pending?.[0];
    const what = action ? `${action.connector}.${action.method}(${JSON.stringify(action.args)})` : "an action";
    return ["waiting", "Waiting for approval", element("p", {}, `${what} waits for an operator's decision.`)];
  }
  if (output?.status === "rejected") return ["denied", "Rejected", element("p", {}, output.message)];
  return ["failed", `Error ${output?.code ?? ""}`, element("p", {}, output?.error ?? "")];
}

function renderCall(part) {
  let kind = "running";
  let title = "Running…";
  let body;
  let buttons;
  if (part.state === "approval-requested") {
    kind = "waiting";
    title = "Waiting for your approval";
    // A program waiting on several actions at once lists them one per line (R-AP-8).
    body = element(
      "p",
      { "data-testid": "pending-reason", style: "white-space: pre-line" },
      readableReason(part.approval.requestReason),
    );
    const approve = element("button", { class: "approve", "data-testid": "approve" }, "Approve");
    const reject = element("button", { class: "reject", "data-testid": "reject" }, "Reject");
    approve.onclick = () => chat.addToolApprovalResponse({ id: part.approval.id, approved: true });
    reject.onclick = () =>
      chat.addToolApprovalResponse({ id: part.approval.id, approved: false, reason: "rejected in the chat" });
    buttons = element("p", {}, approve, " ", reject);
  } else if (part.state === "approval-responded") {
    title = part.approval.approved ? "Approved, running…" : "Rejected";
  } else if (part.state === "output-available") {
    [kind, title, body] = describeOutput(part.output);
  } else if (part.state === "output-denied") {
    kind = "denied";
    title = "Rejected";
    body = element("p", {}, part.approval.reason ?? "");
  } else if (part.state === "output-error") {
    kind = "failed";
    title = "Error";
    body = element("p", {}, part.errorText);
  }
  const program = element("details", {}, element("summary", {}, "Program"), element("pre", {}, part.input?.code ?? ""));
  return element(
    "div",
    { class: `call ${kind}`, "data-testid": "codemode-call", "data-state": part.state },
    element("span", { class: "state" }, title),
    body,
    buttons,
    program,
  );
}

function render() {
  list.replaceChildren(
    ...chat.messages.map((message) => {
      const parts = message.parts.map((part) => {
        if (part.type === "text") return element("p", {}, part.text);
        if (part.type === "tool-codemode") return renderCall(part);
        return undefined;
      });
      return element("div", { class: `message ${message.role}`, "data-role": message.role }, ...parts.filter(Boolean));
    }),
  );
  status.textContent =
    chat.status === "ready" ? "" : chat.status === "error" ? `Error: ${chat.error?.message ?? "request failed"}` : "…";
  status.dataset.status = chat.status;
}

document.querySelector("#composer").addEventListener("submit", (event) => {
  event.preventDefault();
  const input = document.querySelector("#prompt");
  const text = input.value.trim();
  if (!text) return;
  input.value = "";
  if (chat.status === "error") chat.clearError();
  chat.sendMessage({ text });
});

// --- decisions made elsewhere ----------------------------------------------------------------------
// While a call waits, ask the server now and then whether it was decided on the operator page;
// syncApprovals answers with the conversation brought up to date.
function isOpen(part) {
  if (part.type !== "tool-codemode") return false;
  // An answer that was never sent (or that the server refused) is settled by the server too.
  if (part.state === "approval-requested" || part.state === "approval-responded") return true;
  return part.state === "output-available" && (part.output?.status === "paused" || part.output?.code === "BUSY");
}

async function syncDecisions() {
  if (chat.status !== "ready" || !chat.messages.some((message) => message.parts.some(isOpen))) return;
  const before = JSON.stringify(chat.messages);
  try {
    const response = await fetch("/api/sync", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ messages: chat.messages }),
    });
    if (!response.ok) return;
    const synced = await response.json();
    // Apply only if nothing happened meanwhile (a click, a new message).
    if (chat.status === "ready" && JSON.stringify(chat.messages) === before && JSON.stringify(synced) !== before)
      chat.messages = synced;
  } catch {
    // The server is restarting: try again on the next tick.
  }
}
setInterval(syncDecisions, 1_000);
render();
window.codemodeChat = chat;
