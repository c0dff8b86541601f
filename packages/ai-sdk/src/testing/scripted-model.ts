// A language model for tests: the AI SDK's MockLanguageModelV4 playing a script of turns, with
// the prompt of every call kept so a test can assert on what the model was shown.
import { MockLanguageModelV4 } from "ai/test";

type CallOptions = Parameters<MockLanguageModelV4["doGenerate"]>[0];
type GenerateResult = Awaited<ReturnType<MockLanguageModelV4["doGenerate"]>>;
type StreamPart =
  Awaited<ReturnType<MockLanguageModelV4["doStream"]>>["stream"] extends ReadableStream<infer Part> ? Part : never;
export type Prompt = CallOptions["prompt"];

/** One answer of the model: code for the codemode tool, or text. */
export type Turn = { code: string; toolCallId?: string; toolName?: string } | { text: string };

export interface ScriptedModel {
  model: MockLanguageModelV4;
  /** The prompt of each call, in order (generate and stream alike). */
  prompts: Prompt[];
}

export function scriptedModel(script: Array<Turn | ((prompt: Prompt) => Turn)>): ScriptedModel {
  const prompts: Prompt[] = [];
  let calls = 0;
  const next = (options: CallOptions): Turn => {
    prompts.push(options.prompt);
    const step = script[calls];
    calls += 1;
    if (!step) throw new Error(`the script has ${script.length} turns; the model was called again`);
    return typeof step === "function" ? step(options.prompt) : step;
  };
  const model = new MockLanguageModelV4({
    doGenerate: async (options) => generateResult(next(options), calls),
    doStream: async (options) => ({ stream: streamOf(next(options), calls) }),
  });
  return { model, prompts };
}

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
};

function generateResult(turn: Turn, call: number): GenerateResult {
  if ("text" in turn)
    return {
      content: [{ type: "text", text: turn.text }],
      finishReason: { unified: "stop", raw: "stop" },
      usage,
      warnings: [],
    };
  return {
    content: [
      {
        type: "tool-call",
        toolCallId: turn.toolCallId ?? `call-${call}`,
        toolName: turn.toolName ?? "codemode",
        input: JSON.stringify({ code: turn.code }),
      },
    ],
    finishReason: { unified: "tool-calls", raw: "tool_calls" },
    usage,
    warnings: [],
  };
}

function streamOf(turn: Turn, call: number): ReadableStream<StreamPart> {
  const parts: StreamPart[] = [{ type: "stream-start", warnings: [] }];
  if ("text" in turn) {
    parts.push(
      { type: "text-start", id: "t" },
      { type: "text-delta", id: "t", delta: turn.text },
      { type: "text-end", id: "t" },
    );
    parts.push({ type: "finish", finishReason: { unified: "stop", raw: "stop" }, usage });
  } else {
    parts.push({
      type: "tool-call",
      toolCallId: turn.toolCallId ?? `call-${call}`,
      toolName: turn.toolName ?? "codemode",
      input: JSON.stringify({ code: turn.code }),
    });
    parts.push({ type: "finish", finishReason: { unified: "tool-calls", raw: "tool_calls" }, usage });
  }
  return new ReadableStream({
    start(controller) {
      for (const part of parts) controller.enqueue(part);
      controller.close();
    },
  });
}

/** The outputs of every tool result the model was shown in one prompt, in order. */
export function toolResultsIn(prompt: Prompt): Array<{ toolCallId: string; output: unknown }> {
  const results: Array<{ toolCallId: string; output: unknown }> = [];
  for (const message of prompt) {
    if (message.role !== "tool") continue;
    for (const part of message.content)
      if (part.type === "tool-result") results.push({ toolCallId: part.toolCallId, output: part.output });
  }
  return results;
}

/** What the model was shown as the JSON value of the last tool result in a prompt. */
export function lastToolResultValue(prompt: Prompt): unknown {
  const output = toolResultsIn(prompt).at(-1)?.output as { type?: string; value?: unknown } | undefined;
  return output?.type === "json" ? output.value : output;
}
