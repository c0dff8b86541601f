// What a test of a useChat app needs: one request of its server (UI messages in, the assistant's
// UI message out, as the browser assembles it), the user's turns, and the clicks on a Code Mode part.
import type { CodemodeRuntime } from "@codemode/core";
import { convertToModelMessages, type LanguageModel, readUIMessageStream, streamText, type UIMessage } from "ai";
import { chatSettings } from "./approvals.js";

/** One request of a useChat app: UI messages in, the assistant's UI message out. */
export async function chatTurn(
  model: LanguageModel,
  runtime: CodemodeRuntime,
  messages: UIMessage[],
  withApproval = true,
): Promise<UIMessage> {
  const options = chatSettings(runtime, withApproval);
  const result = streamText({
    model,
    ...options,
    messages: await convertToModelMessages(messages, { tools: options.tools }),
  });
  let assistant: UIMessage | undefined;
  for await (const message of readUIMessageStream({ stream: result.toUIMessageStream() })) assistant = message;
  return assistant!;
}

export const user = (id: string, text: string): UIMessage => ({ id, role: "user", parts: [{ type: "text", text }] });

/** A conversation's first turn: the user's message `text`, and the assistant's answer to it. */
export async function firstTurn(
  model: LanguageModel,
  runtime: CodemodeRuntime,
  text: string,
  withApproval = true,
): Promise<{ first: UIMessage; assistant: UIMessage }> {
  const first = user("u1", text);
  return { first, assistant: await chatTurn(model, runtime, [first], withApproval) };
}

export type CodemodePart = {
  type: string;
  state: string;
  toolCallId: string;
  input: { code: string };
  output?: unknown;
  approval?: { id: string; approved?: boolean; reason?: string; requestReason?: string };
};

/** The message's Code Mode part. */
export function codemodePart(message: UIMessage): CodemodePart {
  return message.parts.find((part) => part.type === "tool-codemode") as unknown as CodemodePart;
}

/** What useChat's addToolApprovalResponse does to the part when the user clicks Approve or Reject. */
export function clicked(message: UIMessage, approved: boolean, reason?: string): UIMessage {
  return {
    ...message,
    parts: message.parts.map((part) => {
      const candidate = part as unknown as CodemodePart;
      if (candidate.state !== "approval-requested") return part;
      return {
        ...candidate,
        state: "approval-responded",
        approval: { ...candidate.approval!, approved, ...(reason ? { reason } : {}) },
      } as unknown as UIMessage["parts"][number];
    }),
  };
}

/**
 * A first turn whose approval request the user answered in the chat (Approve or Reject, with a
 * reason), before anything sent the answer: the user's message, the answered assistant message,
 * and the first action the run waits on.
 */
export async function answeredFirstTurn(
  model: LanguageModel,
  runtime: CodemodeRuntime,
  text: string,
  approved: boolean,
  reason?: string,
) {
  const { first, assistant } = await firstTurn(model, runtime, text);
  const [action] = (await runtime.pending()).items;
  return { first, answered: clicked(assistant, approved, reason), action: action! };
}
