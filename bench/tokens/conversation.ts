/**
 * One task, one way: a real `generateText` loop of the AI SDK through the real `@ai-sdk/openai`
 * provider (Chat Completions), against the local imitation of the OpenAI HTTP API
 * (test/openai-imitation/server.ts), whose "model" is the task's script. Every request the
 * provider sends is recorded and counted as bench/tokens/count.ts says: the messages by OpenAI's
 * cookbook recipe, the tool definitions both as raw JSON and by the cookbook's recipe for them.
 */
import { createOpenAI } from "@ai-sdk/openai";
import { createCodemodeTool } from "@codemode/ai-sdk";
import { type CodemodeRuntime, createCodemodeRuntime } from "@codemode/core";
import { generateText, jsonSchema, stepCountIs, type ToolSet, tool } from "ai";
import {
  type Item,
  type RecordedRequest,
  type Reply,
  startOpenAIImitation,
} from "../../test/openai-imitation/server.ts";
import { replyTokens, requestTokens, type TwoWays } from "./count.ts";
import type { Seen } from "./tasks.ts";
import type { ToolSource } from "./tool-sets.ts";

/** What one conversation cost. */
export interface ConversationCount {
  /** Model calls (requests the provider sent). */
  turns: number;
  /** Summed over every request: what the model read, with the tool definitions counted both ways. */
  inputTokens: TwoWays;
  /** Of `inputTokens`: the tool definitions, summed over every request. */
  toolDefinitionTokens: TwoWays;
  /** Summed over every reply: what the model wrote (tool-call names and arguments, programs, text). */
  outputTokens: number;
  /** Bytes of tool results in the conversation: the intermediate data that reached the model. */
  intermediateBytes: number;
  /** The model's final text. */
  answer: string;
}

type Json = Record<string, unknown>;

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
    // No retries: a failed request would otherwise be sent, and counted, again.
    const result = await generateText({ model, tools, prompt, stopWhen: stepCountIs(10), maxRetries: 0 });
    return { ...countRequests(imitation.requests), outputTokens, answer: result.text };
  } finally {
    await imitation.close();
  }
}

function countRequests(requests: RecordedRequest[]): Omit<ConversationCount, "outputTokens" | "answer"> {
  const inputTokens = { json: 0, recipe: 0 };
  const toolDefinitionTokens = { json: 0, recipe: 0 };
  for (const request of requests) {
    const { messages, tools } = requestTokens(request.body);
    for (const way of ["json", "recipe"] as const) {
      inputTokens[way] += messages + tools[way];
      toolDefinitionTokens[way] += tools[way];
    }
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
