/** A useChat app's server turn, through the AI SDK and whichever provider model the test passes. */
import { createOpenAI } from "@ai-sdk/openai";
import { codemodeToolApproval, createCodemodeTool } from "@codemode/ai-sdk";
import type { CodemodeRuntime } from "@codemode/core";
import {
  convertToModelMessages,
  type LanguageModel,
  readUIMessageStream,
  stepCountIs,
  streamText,
  type UIMessage,
} from "ai";
import { afterAll, afterEach, beforeAll } from "vitest";
import { type Item, type OpenAIImitation, type Reply, startOpenAIImitation } from "./server.ts";

/** One request of a useChat app: its server converts the UI messages and streams the answer back. */
export async function chatTurn(
  model: LanguageModel,
  runtime: CodemodeRuntime,
  messages: UIMessage[],
): Promise<UIMessage> {
  const tools = { codemode: createCodemodeTool(runtime) };
  const result = streamText({
    model,
    tools,
    toolApproval: { codemode: codemodeToolApproval(runtime) },
    stopWhen: stepCountIs(5),
    messages: await convertToModelMessages(messages, { tools }),
  });
  let assistant: UIMessage | undefined;
  for await (const message of readUIMessageStream({ stream: result.toUIMessageStream() })) assistant = message;
  return assistant!;
}

export const user = (id: string, text: string): UIMessage => ({ id, role: "user", parts: [{ type: "text", text }] });
export const textOf = (message: UIMessage) =>
  message.parts.map((part) => (part.type === "text" ? part.text : "")).join("");

/**
 * One imitation of the OpenAI API for a test file, answering with `model`: started before its
 * tests, its requests forgotten and the runtimes `track`ed closed after each, and the two APIs of
 * the real `@ai-sdk/openai` provider pointed at it.
 */
export function imitationForFile(model: (items: Item[]) => Reply) {
  let imitation: OpenAIImitation | undefined;
  const runtimes: CodemodeRuntime[] = [];
  beforeAll(async () => {
    imitation = await startOpenAIImitation(model);
  });
  afterAll(async () => {
    await imitation?.close();
  });
  afterEach(async () => {
    if (imitation) imitation.requests.length = 0;
    await Promise.all(runtimes.splice(0).map((runtime) => runtime.close()));
  });
  const started = (): OpenAIImitation => {
    if (!imitation) throw new Error("the imitation starts in beforeAll");
    return imitation;
  };
  const provider = () => createOpenAI({ baseURL: started().baseURL, apiKey: "imitation" });
  return {
    get imitation() {
      return started();
    },
    /** Closed after the test. */
    track<T extends { runtime: CodemodeRuntime }>(created: T): T {
      runtimes.push(created.runtime);
      return created;
    },
    apis: [
      { api: "responses", model: () => provider()("gpt-4.1-mini") },
      { api: "chat", model: () => provider().chat("gpt-4.1-mini") },
    ] as const,
  };
}
