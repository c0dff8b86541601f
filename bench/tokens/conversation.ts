/**
 * One task, one way: a real `generateText` loop of the AI SDK through the real `@ai-sdk/openai`
 * provider (Chat Completions), against the local imitation of the OpenAI HTTP API
 * (test/openai-imitation/server.ts), whose "model" is the task's script. Every request the
 * provider sends is recorded and counted with the o200k_base tokenizer (GPT-4o, GPT-4.1, o-series).
 *
 * How a request is counted: the tool definitions are the `tools` array exactly as the provider
 * serialised it (JSON); each message is its text, or for an assistant's tool calls their names
 * and argument strings, plus 3 tokens of message framing, plus 3 for the reply's start, as
 * OpenAI's published counting recipe does. OpenAI renders tool definitions in its own format
 * before the model sees them, so its billed figure differs by a few percent; both styles are
 * counted the same way.
 */
import { createOpenAI } from "@ai-sdk/openai";
import { createCodemodeTool } from "@codemode/ai-sdk";
import { type CodemodeRuntime, createCodemodeRuntime } from "@codemode/core";
import { generateText, jsonSchema, stepCountIs, type ToolSet, tool } from "ai";
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import {
  type Item,
  type RecordedRequest,
  type Reply,
  startOpenAIImitation,
} from "../../test/openai-imitation/server.ts";
import type { Seen } from "./tasks.ts";
import type { ToolSource } from "./tool-sets.ts";

/** What one conversation cost. */
export interface ConversationCount {
  /** Model calls (requests the provider sent). */
  turns: number;
  /** Summed over every request: what the model read. */
  inputTokens: number;
  /** Of `inputTokens`: the tool definitions, summed over every request. */
  toolDefinitionTokens: number;
  /** Summed over every reply: what the model wrote (tool-call names and arguments, programs, text). */
  outputTokens: number;
  /** Bytes of tool results in the conversation: the intermediate data that reached the model. */
  intermediateBytes: number;
  /** The model's final text. */
  answer: string;
}

type Json = Record<string, unknown>;

/** Tokens of one request as the model reads it. */
export function requestTokens(body: Json): { total: number; tools: number } {
  const tools = Array.isArray(body.tools) && body.tools.length > 0 ? countTokens(JSON.stringify(body.tools)) : 0;
  let messages = 3;
  for (const message of (body.messages as Json[] | undefined) ?? []) {
    messages += 3;
    if (typeof message.content === "string") messages += countTokens(message.content);
    else if (Array.isArray(message.content))
      for (const part of message.content as Json[])
        if (typeof part.text === "string") messages += countTokens(part.text);
    for (const call of (message.tool_calls as Json[] | undefined) ?? []) {
      const fn = call.function as { name: string; arguments: string };
      messages += countTokens(fn.name) + countTokens(fn.arguments);
    }
  }
  return { total: tools + messages, tools };
}

/** Tokens the model writes for one reply. */
export function replyTokens(reply: Reply): number {
  if ("text" in reply) return countTokens(reply.text);
  const calls = "calls" in reply ? reply.calls : [reply.call];
  return calls.reduce((sum, call) => sum + countTokens(call.name) + countTokens(JSON.stringify(call.arguments)), 0);
}

/** The conversation as the script reads it: each call with its arguments and its parsed result. */
export function seenOf(items: Item[]): Seen {
  const outputs = new Map<string, unknown>();
  for (const item of items) if (item.type === "result") outputs.set(item.callId, parse(item.output));
  const all = items.flatMap((item) =>
    item.type === "call" && outputs.has(item.callId)
      ? [{ name: item.name, args: parse(item.arguments), output: outputs.get(item.callId) }]
      : [],
  );
  return { calls: (name) => all.filter((call) => call.name === name) };
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Direct calling: one AI SDK tool per method, `<source>_<method>`, with the source's own schema. */
export function directTools(sources: readonly ToolSource[]): ToolSet {
  const tools: ToolSet = {};
  for (const source of sources) {
    for (const definition of source.direct) {
      const method = source.connector.tools[definition.name];
      tools[`${source.name}_${definition.name}`] = tool({
        ...(definition.description ? { description: definition.description } : {}),
        inputSchema: jsonSchema<unknown>(definition.inputSchema),
        execute: async (args: unknown): Promise<unknown> => {
          if (!method || source.origin !== "task")
            throw new Error(`${source.name}.${definition.name} is not part of a task`);
          return await method.execute(args as never, undefined as never);
        },
      });
    }
  }
  return tools;
}

/** Runs one conversation: `tools` offered on every request, `script` answering as the model. */
export async function converse(
  tools: ToolSet,
  prompt: string,
  script: (seen: Seen) => Reply,
): Promise<ConversationCount> {
  let outputTokens = 0;
  const imitation = await startOpenAIImitation((items) => {
    const reply = script(seenOf(items));
    outputTokens += replyTokens(reply);
    return reply;
  });
  try {
    const model = createOpenAI({ baseURL: imitation.baseURL, apiKey: "imitation" }).chat("gpt-4.1");
    const result = await generateText({ model, tools, prompt, stopWhen: stepCountIs(10) });
    return { ...countRequests(imitation.requests), outputTokens, answer: result.text };
  } finally {
    await imitation.close();
  }
}

function countRequests(requests: RecordedRequest[]): Omit<ConversationCount, "outputTokens" | "answer"> {
  let inputTokens = 0;
  let toolDefinitionTokens = 0;
  for (const request of requests) {
    const counted = requestTokens(request.body);
    inputTokens += counted.total;
    toolDefinitionTokens += counted.tools;
  }
  const last = (requests.at(-1)?.body.messages as Json[] | undefined) ?? [];
  const intermediateBytes = last
    .filter((message) => message.role === "tool")
    .reduce((sum, message) => sum + Buffer.byteLength(String(message.content)), 0);
  return { turns: requests.length, inputTokens, toolDefinitionTokens, intermediateBytes };
}

/** Code Mode: one runtime over the sources' connectors, and its AI SDK tool. */
export function codeModeTools(sources: readonly ToolSource[]): {
  runtime: CodemodeRuntime;
  tools: ToolSet;
  close(): Promise<void>;
} {
  const runtime = createCodemodeRuntime({
    name: "token-bench",
    connectors: sources.map((source) => source.connector),
  });
  return { runtime, tools: { codemode: createCodemodeTool(runtime) }, close: () => runtime.close() };
}
