/** A useChat app's server turn, through the AI SDK and whichever provider model the test passes. */
import { createOpenAI } from "@ai-sdk/openai";
import { codemodeToolApproval, createCodemodeTool, createModelTools } from "@codemode/ai-sdk";
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

/**
 * One request of a useChat app: its server converts the UI messages and streams the answer back.
 * With `modelTools`, the tools the model calls directly sit beside the Code Mode tool, and the
 * approval function is the generic one (it asks about both). After an approval the browser sends
 * the assistant's message back last, and the stream goes on with it.
 */
export async function chatTurn(
  model: LanguageModel,
  runtime: CodemodeRuntime,
  messages: UIMessage[],
  options: { modelTools?: { approvedBy: string } } = {},
): Promise<UIMessage> {
  const tools = {
    codemode: createCodemodeTool(runtime),
    ...(options.modelTools ? createModelTools(runtime, options.modelTools) : {}),
  };
  const result = streamText({
    model,
    tools,
    toolApproval: options.modelTools ? codemodeToolApproval(runtime) : { codemode: codemodeToolApproval(runtime) },
    stopWhen: stepCountIs(5),
    messages: await convertToModelMessages(messages, { tools }),
  });
  const last = messages.at(-1);
  const continued = last?.role === "assistant" ? last : undefined;
  const stream = result.toUIMessageStream(continued ? { originalMessages: messages } : {});
  let assistant: UIMessage | undefined;
  for await (const message of readUIMessageStream({ stream, ...(continued ? { message: continued } : {}) }))
    assistant = message;
  return assistant!;
}

/** The assistant's message with the approval request of `toolType` parts answered, as the browser sends it. */
export function answerApprovals(message: UIMessage, toolType: string, approved: boolean, reason?: string): UIMessage {
  return {
    ...message,
    parts: message.parts.map((part) =>
      part.type === toolType && "state" in part && part.state === "approval-requested"
        ? {
            ...part,
            state: "approval-responded" as const,
            approval: { ...part.approval, approved, ...(reason !== undefined ? { reason } : {}) },
          }
        : part,
    ),
  } as UIMessage;
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
