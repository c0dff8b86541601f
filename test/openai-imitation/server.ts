/**
 * A local imitation of the OpenAI HTTP API for tests of the real provider packages
 * (`@ai-sdk/openai`, `@langchain/openai`): `POST /v1/responses` and `POST /v1/chat/completions`,
 * JSON or server-sent events, on 127.0.0.1 only. Every request is recorded, and each request's
 * conversation is read into one neutral list of items (user and assistant text, function calls,
 * function results) so a test's "model" — a function of that list — decides the reply and the test
 * can check exactly what the provider was sent. `item_reference` inputs (the Responses API's
 * stored items) are resolved from the items this server produced, as OpenAI's store would.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** One entry of a conversation as the provider sent it, whichever API it used. */
export type Item =
  | { type: "text"; role: "system" | "user" | "assistant"; text: string }
  | { type: "call"; callId: string; name: string; arguments: string }
  | { type: "result"; callId: string; output: string };

/** One function call the imitated model makes. */
export interface ReplyCall {
  name: string;
  arguments: unknown;
}

/**
 * What the imitated model answers: text, one function call, or several at once (parallel calls).
 * `{ calls: [] }` is refused: a reply with no call and no text is no turn a model can give.
 */
export type Reply = { text: string } | { call: ReplyCall } | { calls: ReplyCall[] };

/** The calls of a reply: none for text. */
function callsOf(reply: Reply): ReplyCall[] {
  if ("calls" in reply) return reply.calls;
  return "call" in reply ? [reply.call] : [];
}

export interface RecordedRequest {
  api: "responses" | "chat";
  body: Record<string, unknown>;
  items: Item[];
  /** The names of the tools the request offered. */
  tools: string[];
}

export interface OpenAIImitation {
  /** For the providers' `baseURL`: `http://127.0.0.1:<port>/v1`. */
  baseURL: string;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

type Json = Record<string, unknown>;

export async function startOpenAIImitation(
  model: (items: Item[], request: RecordedRequest) => Reply,
): Promise<OpenAIImitation> {
  const requests: RecordedRequest[] = [];
  const stored = new Map<string, Item>();
  let counter = 0;
  const nextId = (prefix: string) => `${prefix}_${++counter}`;

  const server = createServer(async (request, response) => {
    try {
      const body = JSON.parse(await readBody(request)) as Json;
      const api = request.url?.endsWith("/responses")
        ? "responses"
        : request.url?.endsWith("/chat/completions")
          ? "chat"
          : undefined;
      if (request.method !== "POST" || !api)
        return send(response, 404, {
          error: {
            message: `no route ${request.method} ${request.url}`,
            type: "invalid_request_error",
            code: "not_found",
          },
        });
      const items = api === "responses" ? responsesItems(body, stored) : chatItems(body);
      const recorded: RecordedRequest = { api, body, items, tools: toolNames(body) };
      requests.push(recorded);
      const reply = model(items, recorded);
      if ("calls" in reply && reply.calls.length === 0)
        throw new Error(
          "the imitated model replied { calls: [] }: a reply needs at least one call, or { text } to answer",
        );
      if (api === "responses") return respondResponses(response, body, reply, nextId, stored);
      return respondChat(response, body, reply, nextId);
    } catch (error) {
      send(response, 500, { error: { message: String(error), type: "server_error", code: "imitation_failed" } });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = "";
    request.setEncoding("utf8");
    request.on("data", (chunk: string) => (text += chunk));
    request.on("end", () => resolve(text));
    request.on("error", reject);
  });
}

function send(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { "content-type": "application/json" });
  response.end(JSON.stringify(body));
}

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((part) => (typeof (part as { text?: unknown }).text === "string" ? (part as { text: string }).text : ""))
    .join("");
}

function toolNames(body: Json): string[] {
  const tools = Array.isArray(body.tools) ? (body.tools as Json[]) : [];
  return tools.map((tool) => String((tool.function as Json | undefined)?.name ?? tool.name ?? tool.type));
}

function responsesItems(body: Json, stored: Map<string, Item>): Item[] {
  const items: Item[] = [];
  if (typeof body.instructions === "string") items.push({ type: "text", role: "system", text: body.instructions });
  const input =
    typeof body.input === "string"
      ? [{ role: "user", content: body.input }]
      : ((body.input as Json[] | undefined) ?? []);
  for (const entry of input) {
    if (entry.type === "item_reference") {
      const item = stored.get(String(entry.id));
      if (!item) throw new Error(`item_reference to unknown item ${String(entry.id)}`);
      items.push(item);
    } else if (entry.type === "function_call")
      items.push({
        type: "call",
        callId: String(entry.call_id),
        name: String(entry.name),
        arguments: String(entry.arguments),
      });
    else if (entry.type === "function_call_output")
      items.push({
        type: "result",
        callId: String(entry.call_id),
        output: typeof entry.output === "string" ? entry.output : JSON.stringify(entry.output),
      });
    else if (typeof entry.role === "string")
      items.push({
        type: "text",
        role: entry.role === "developer" ? "system" : (entry.role as "system" | "user" | "assistant"),
        text: textOf(entry.content),
      });
  }
  return items;
}

function chatItems(body: Json): Item[] {
  const items: Item[] = [];
  for (const message of (body.messages as Json[] | undefined) ?? []) {
    const role = message.role === "developer" ? "system" : String(message.role);
    if (role === "tool") {
      items.push({ type: "result", callId: String(message.tool_call_id), output: textOf(message.content) });
      continue;
    }
    const text = textOf(message.content);
    if (text) items.push({ type: "text", role: role as "system" | "user" | "assistant", text });
    for (const call of (message.tool_calls as Json[] | undefined) ?? []) {
      const fn = call.function as Json;
      items.push({ type: "call", callId: String(call.id), name: String(fn.name), arguments: String(fn.arguments) });
    }
  }
  return items;
}

const usage = {
  input_tokens: 12,
  output_tokens: 6,
  total_tokens: 18,
  input_tokens_details: { cached_tokens: 0 },
  output_tokens_details: { reasoning_tokens: 0 },
};

function respondResponses(
  response: ServerResponse,
  body: Json,
  reply: Reply,
  nextId: (prefix: string) => string,
  stored: Map<string, Item>,
): void {
  const id = nextId("resp");
  const model = String(body.model ?? "gpt-imitation");
  const created_at = Math.floor(Date.now() / 1000);
  const output: Json[] = [];
  if ("text" in reply) {
    const item = {
      type: "message",
      id: nextId("msg"),
      status: "completed",
      role: "assistant",
      content: [{ type: "output_text", text: reply.text, annotations: [] }],
    };
    stored.set(item.id, { type: "text", role: "assistant", text: reply.text });
    output.push(item);
  }
  for (const call of callsOf(reply)) {
    const callId = nextId("call");
    const args = JSON.stringify(call.arguments);
    const item = {
      type: "function_call",
      id: nextId("fc"),
      call_id: callId,
      name: call.name,
      arguments: args,
      status: "completed",
    };
    stored.set(item.id, { type: "call", callId, name: call.name, arguments: args });
    output.push(item);
  }
  const final = {
    id,
    object: "response",
    created_at,
    model,
    status: "completed",
    output,
    usage,
    incomplete_details: null,
    error: null,
  };
  if (!body.stream) {
    send(response, 200, final);
    return;
  }

  const events: Json[] = [
    { type: "response.created", response: { ...final, status: "in_progress", output: [], usage: null } },
  ];
  for (const [index, item] of output.entries()) {
    if (item.type === "message") {
      events.push({
        type: "response.output_item.added",
        output_index: index,
        item: { ...item, status: "in_progress", content: [] },
      });
      events.push({
        type: "response.output_text.delta",
        item_id: item.id,
        output_index: index,
        content_index: 0,
        delta: (reply as { text: string }).text,
      });
    } else {
      events.push({
        type: "response.output_item.added",
        output_index: index,
        item: { ...item, status: "in_progress", arguments: "" },
      });
      events.push({
        type: "response.function_call_arguments.delta",
        item_id: item.id,
        output_index: index,
        delta: item.arguments,
      });
    }
    events.push({ type: "response.output_item.done", output_index: index, item });
  }
  events.push({ type: "response.completed", response: final });
  response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  for (const [index, event] of events.entries())
    response.write(`event: ${String(event.type)}\ndata: ${JSON.stringify({ ...event, sequence_number: index })}\n\n`);
  response.end();
}

function respondChat(response: ServerResponse, body: Json, reply: Reply, nextId: (prefix: string) => string): void {
  const base = {
    id: nextId("chatcmpl"),
    created: Math.floor(Date.now() / 1000),
    model: String(body.model ?? "gpt-imitation"),
    system_fingerprint: null,
  };
  const chatUsage = { prompt_tokens: 12, completion_tokens: 6, total_tokens: 18 };
  const toolCalls = callsOf(reply).map((call) => ({
    id: nextId("call"),
    type: "function",
    function: { name: call.name, arguments: JSON.stringify(call.arguments) },
  }));
  const finish = toolCalls.length > 0 ? "tool_calls" : "stop";
  if (!body.stream) {
    const message = {
      role: "assistant",
      content: "text" in reply ? reply.text : null,
      ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
      refusal: null,
    };
    send(response, 200, {
      ...base,
      object: "chat.completion",
      choices: [{ index: 0, message, finish_reason: finish, logprobs: null }],
      usage: chatUsage,
    });
    return;
  }
  const chunk = (delta: Json, finishReason: string | null, extra: Json = {}) => ({
    ...base,
    object: "chat.completion.chunk",
    choices: [{ index: 0, delta, finish_reason: finishReason, logprobs: null }],
    ...extra,
  });
  const chunks = [chunk({ role: "assistant", content: "" }, null)];
  if ("text" in reply) chunks.push(chunk({ content: reply.text }, null));
  for (const [index, toolCall] of toolCalls.entries())
    chunks.push(chunk({ tool_calls: [{ index, ...toolCall }] }, null));
  chunks.push(chunk({}, finish));
  if ((body.stream_options as Json | undefined)?.include_usage)
    chunks.push({ ...base, object: "chat.completion.chunk", choices: [], usage: chatUsage } as never);
  response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  for (const item of chunks) response.write(`data: ${JSON.stringify(item)}\n\n`);
  response.end("data: [DONE]\n\n");
}
