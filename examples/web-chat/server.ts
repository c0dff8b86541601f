// A small web chat over the Vercel AI SDK's UI message stream: the model writes Code Mode
// programs, an order pauses the program, and the chat shows the pending call with Approve and
// Reject (the AI SDK's own approval request, via codemodeToolApproval). An operator can decide
// the same calls on /operator; the chat picks that up (syncApprovals). Runs and orders live in a
// SQLite file, so the server may restart between the pause and the approval.
//
//   npm run example:web-chat                 # http://127.0.0.1:3000 and /operator
//   PORT=4000 WEB_CHAT_DB=/tmp/chat.sqlite npm run example:web-chat
//
// With OPENAI_API_KEY it talks to OpenAI (OPENAI_MODEL, default gpt-5-mini; OPENAI_BASE_URL is
// honoured), without it a scripted model that follows a few rules (scripted-model.ts).
import { readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { fileURLToPath } from "node:url";
import { openai } from "@ai-sdk/openai";
import { approvalReasonText, codemodeToolApproval, createCodemodeTool, syncApprovals } from "@codemode/ai-sdk";
import { describePendingAction, pauseApprovalReason } from "@codemode/core/adapters";
import { convertToModelMessages, stepCountIs, streamText, type LanguageModel, type UIMessage } from "ai";
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
const instructions = "You help customers of a small shop. Use the codemode tool to look up products and to order. An order waits for a human's approval: say so, and never order again to find out.";
const modules = await browserModules();

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
    description: approvalReasonText(pauseApprovalReason({ status: "paused", executionId: action.executionId, pending: [action] })),
    call: describePendingAction(action),
  }));
  return { pending, orders: shop.orders() };
}

/** POST /api/operator/decide — the operator approves or rejects one pending action. */
async function decide(body: { executionId: string; seq: number; approved: boolean; reason?: string }) {
  const audit = { executionId: body.executionId, seq: body.seq, by: "operator", ...(body.reason ? { reason: body.reason } : {}) };
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
  if (request.method === "GET" && pages[url.pathname]) {
    const page = pages[url.pathname]!;
    let text = readFileSync(here(page.file), "utf8");
    if (page.type === "text/html") text = text.replace("<!-- importmap -->", `<script type="importmap">${JSON.stringify(modules.importMap)}</script>`);
    return send(response, 200, text, page.type);
  }
  if (request.method === "GET" && url.pathname === "/modules/ai.js") return send(response, 200, modules.code, "text/javascript");
  if (request.method === "GET" && url.pathname === "/api/operator") return json(response, await operatorView());
  if (request.method === "POST" && url.pathname === "/api/chat") return chat(await readJson(request), response);
  if (request.method === "POST" && url.pathname === "/api/sync") return json(response, await sync(await readJson(request)));
  if (request.method === "POST" && url.pathname === "/api/operator/decide") return json(response, await decide(await readJson(request)));
  send(response, 404, "not found", "text/plain");
}

const server = createServer((request, response) => {
  route(request, response).catch((error: unknown) => {
    console.error(error);
    if (!response.headersSent) send(response, 500, String(error), "text/plain");
    else response.end();
  });
});
server.listen(port, "127.0.0.1", () => {
  console.log(`web chat: http://127.0.0.1:${port}  (operator: http://127.0.0.1:${port}/operator)`);
  console.log(`model: ${process.env.OPENAI_API_KEY ? `OpenAI ${modelId}` : "a scripted stand-in (set OPENAI_API_KEY to use OpenAI)"}; store: ${database}`);
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

async function readJson<T>(request: IncomingMessage): Promise<T> {
  let text = "";
  for await (const chunk of request) text += String(chunk);
  return JSON.parse(text) as T;
}
