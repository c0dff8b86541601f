// A small web chat over the Vercel AI SDK's UI message stream: the model writes Code Mode
// programs, an order pauses the program, and the chat shows the pending call with Approve and
// Reject (the AI SDK's own approval request, via codemodeToolApproval). An operator can decide
// the same calls on /operator; the chat picks that up (syncApprovals). An order of more than five
// items is the operator's alone: the chat shows it waiting, and an approval the browser makes up
// is refused (shop.ts, `chatApprovals`). Runs and orders live in a SQLite file, so the server may
// restart between the pause and the approval.
//
//   npm run example:web-chat                 # http://127.0.0.1:3000, and the operator link it prints
//                                            # (/operator#token=…; WEB_CHAT_OPERATOR_TOKEN sets the token)
//   PORT=4000 WEB_CHAT_DB=/tmp/chat.sqlite npm run example:web-chat
//
// With OPENAI_API_KEY it talks to OpenAI (OPENAI_MODEL, default gpt-5-mini; OPENAI_BASE_URL is
// honoured), without it a scripted model that follows a few rules (scripted-model.ts).
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { fileURLToPath } from "node:url";
import { openai } from "@ai-sdk/openai";
import { approvalReasonText, codemodeToolApproval, createCodemodeTool, syncApprovals } from "@codemode/ai-sdk";
import { describePendingAction, pauseApprovalReason } from "@codemode/core/adapters";
import { convertToModelMessages, type LanguageModel, stepCountIs, streamText, type UIMessage } from "ai";
import { browserModules } from "./browser-modules.ts";
import { scriptedModel } from "./scripted-model.ts";
import { openShop } from "./shop.ts";

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));
const port = Number(process.env.PORT ?? 3000);
const database = process.env.WEB_CHAT_DB ?? fileURLToPath(new URL("../../.codemode/web-chat.sqlite", import.meta.url));

const shop = openShop(database);
const { runtime } = shop;
const modelId = process.env.OPENAI_MODEL ?? "gpt-5-mini";
const model: LanguageModel = process.env.OPENAI_API_KEY ? openai(modelId) : scriptedModel();
const tools = { codemode: createCodemodeTool(runtime, { approvedBy: "chat user" }) };
const instructions =
  "You help customers of a small shop. Use the codemode tool to look up products and to order. An order waits for a human's approval: say so, and never order again to find out.";
const modules = await browserModules();
// The operator's key: the operator page reads it from the link's #fragment (never sent in a URL
// to the server, never in a referrer) and sends it as a bearer token. An example is what people
// copy: the operator API is never open, whatever the network.
const operatorToken = process.env.WEB_CHAT_OPERATOR_TOKEN ?? randomBytes(24).toString("base64url");
// Only these Host headers are answered: a page of another site that rebinds its name to
// 127.0.0.1 (DNS rebinding) reaches this server with its own name in Host.
const allowedHosts = new Set([`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`]);

/** POST /api/chat — what useChat's transport sends: the whole conversation, as UI messages. */
async function chat(body: { messages: UIMessage[] }, response: ServerResponse): Promise<void> {
  // Decisions made on the operator page, or answered in the chat and never sent, reach the model.
  const messages = await syncApprovals(body.messages, runtime, { by: "chat user" });
  const result = streamText({
    model,
    instructions,
    tools,
    toolApproval: { codemode: codemodeToolApproval(runtime) },
    stopWhen: stepCountIs(5),
    messages: await convertToModelMessages(messages, { tools }),
  });
  result.pipeUIMessageStreamToResponse(response, { originalMessages: messages });
}

/** POST /api/sync — the page asks whether its waiting calls were decided elsewhere. */
async function sync(body: { messages: UIMessage[] }): Promise<UIMessage[]> {
  return syncApprovals(body.messages, runtime, { keepWaiting: true });
}

/** GET /api/operator — what waits for a decision, and the orders placed. */
async function operatorView() {
  const pending = (await runtime.pending()).items.map((action) => ({
    ...action,
    // The same words the chat shows for this action.
    description: approvalReasonText(
      pauseApprovalReason({ status: "paused", executionId: action.executionId, pending: [action] }),
    ),
    call: describePendingAction(action),
  }));
  return { pending, orders: shop.orders() };
}

/** POST /api/operator/decide — the operator approves or rejects one pending action. */
async function decide(body: { executionId: string; seq: number; approved: boolean; reason?: string }) {
  const audit = {
    executionId: body.executionId,
    seq: body.seq,
    by: "operator",
    ...(body.reason ? { reason: body.reason } : {}),
  };
  if (body.approved) return { outcome: await runtime.approve(audit) };
  return { rejected: await runtime.reject(audit) };
}

const pages: Record<string, { file: string; type: string }> = {
  "/": { file: "public/index.html", type: "text/html" },
  "/operator": { file: "public/operator.html", type: "text/html" },
  "/chat.js": { file: "public/chat.js", type: "text/javascript" },
  "/operator.js": { file: "public/operator.js", type: "text/javascript" },
  "/style.css": { file: "public/style.css", type: "text/css" },
};

async function route(request: IncomingMessage, response: ServerResponse): Promise<void> {
  const url = new URL(request.url ?? "/", "http://localhost");
  if (!allowedHosts.has(request.headers.host ?? ""))
    return send(response, 403, "unknown Host: this server answers 127.0.0.1 only", "text/plain");
  if (url.pathname.startsWith("/api/operator") && !isOperator(request))
    return send(
      response,
      401,
      "the operator API needs the operator's token (open the operator link the server printed)",
      "text/plain",
    );
  if (request.method === "GET" && pages[url.pathname]) {
    const page = pages[url.pathname]!;
    let text = readFileSync(here(page.file), "utf8");
    if (page.type === "text/html")
      text = text.replace(
        "<!-- importmap -->",
        `<script type="importmap">${JSON.stringify(modules.importMap)}</script>`,
      );
    return send(response, 200, text, page.type);
  }
  if (request.method === "GET" && url.pathname === "/modules/ai.js")
    return send(response, 200, modules.code, "text/javascript");
  if (request.method === "GET" && url.pathname === "/api/operator") return json(response, await operatorView());
  if (request.method === "POST" && url.pathname === "/api/chat") return chat(await readJson(request), response);
  if (request.method === "POST" && url.pathname === "/api/sync")
    return json(response, await sync(await readJson(request)));
  if (request.method === "POST" && url.pathname === "/api/operator/decide")
    return json(response, await decide(await readJson(request)));
  send(response, 404, "not found", "text/plain");
}

const server = createServer((request, response) => {
  route(request, response).catch((error: unknown) => {
    if (error instanceof Refused) return send(response, error.status, error.message, "text/plain");
    console.error(error);
    if (!response.headersSent) send(response, 500, String(error), "text/plain");
    else response.end();
  });
});
server.listen(port, "127.0.0.1", () => {
  console.log(
    `web chat: http://127.0.0.1:${port}  (operator: http://127.0.0.1:${port}/operator#token=${operatorToken})`,
  );
  console.log(
    `model: ${process.env.OPENAI_API_KEY ? `OpenAI ${modelId}` : "a scripted stand-in (set OPENAI_API_KEY to use OpenAI)"}; store: ${database}`,
  );
});

// Ctrl-C or a supervisor's SIGTERM: stop taking requests, close the store, exit (R-RT-5).
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    server.close();
    server.closeAllConnections();
    void shop.close().finally(() => process.exit(0));
  });
}

function send(response: ServerResponse, status: number, body: string, type: string): void {
  response.writeHead(status, { "content-type": `${type}; charset=utf-8`, "cache-control": "no-store" });
  response.end(body);
}

function json(response: ServerResponse, value: unknown): void {
  send(response, 200, JSON.stringify(value), "application/json");
}

function isOperator(request: IncomingMessage): boolean {
  const given = request.headers.authorization?.startsWith("Bearer ")
    ? request.headers.authorization.slice(7).trim()
    : "";
  const digest = (text: string) => createHash("sha256").update(text).digest();
  return given !== "" && timingSafeEqual(digest(given), digest(operatorToken));
}

/** A request refused before anything runs: the status and what to say. */
class Refused extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

const MAX_BODY_BYTES = 4 * 1024 * 1024;

/** A JSON body only (a form or text/plain post from another page is refused), of bounded size. */
async function readJson<T>(request: IncomingMessage): Promise<T> {
  if (!/^application\/json\b/i.test(request.headers["content-type"] ?? ""))
    throw new Refused(415, "send JSON (content-type: application/json)");
  let text = "";
  for await (const chunk of request) {
    text += String(chunk);
    if (text.length > MAX_BODY_BYTES) throw new Refused(413, "the body is too large");
  }
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new Refused(400, "the body is not JSON");
  }
}
