import type { CodemodeRuntime, Outcome } from "@codemode/core";
import {
  BOOLEAN,
  checkArgument,
  checkOptions,
  HINTS,
  MODEL_OUTPUT,
  runtimeWith,
  STRING,
} from "@codemode/core/adapters";
import { jsonSchema, type Tool, tool } from "ai";
import { applyChatAnswer } from "./chat-answer.js";
import { registerCodemodeTool } from "./codemode-tools.js";
import { findPauseApproval } from "./pause-approvals.js";
import { prerun } from "./prerun.js";
import { type CodemodeToolOutput, codemodeToolOutput, modelOutputOf, type ToolOutputOptions } from "./tool-output.js";

/** What the model sends: one program. */
export interface CodemodeToolInput {
  code: string;
}

export interface CodemodeToolOptions extends ToolOutputOptions {
  /** Replaces the description the runtime writes (`runtime.modelDescription()`, R-AI-2). */
  description?: string;
  /** Extra text per connector name, appended to its line of the description. Default none. */
  hints?: Readonly<Record<string, string>>;
  /** Recorded as `by` on the actions approved through AI SDK approval responses (R-AP-7). Default none. */
  approvedBy?: string;
  /**
   * The AI SDK's strict mode for the tool: providers that support it (OpenAI) then always produce
   * input that matches `{ code: string }`. The schema is strict-compatible (one required string, no
   * other properties). Default: not set, the provider's default.
   */
  strict?: boolean;
}

const inputSchema = jsonSchema<CodemodeToolInput>(
  {
    type: "object",
    properties: {
      code: {
        type: "string",
        description: "The program: an async arrow function, e.g. `async () => { … return result; }`.",
      },
    },
    required: ["code"],
    additionalProperties: false,
  },
  {
    validate: (value) =>
      typeof (value as { code?: unknown } | null)?.code === "string"
        ? { success: true, value: value as CodemodeToolInput }
        : { success: false, error: new TypeError("the codemode tool takes { code: string }") },
  },
);

const USAGE = "createCodemodeTool(runtime, options)";
const TOOL_RUNTIME = runtimeWith("execute", "decide", "execution", "outcome", "modelDescription");

/**
 * The Code Mode runtime as an AI SDK tool (R-AI-1): the model sends `{ code }`, the tool runs it.
 * It never throws: a pause, a replay divergence or a failing program is an outcome the model
 * reads. The model sees `modelFacingOutcome` — no `calls`, bounded logs. So does the application
 * and, through the UI message stream, the browser: the tool's output is that same model-facing
 * outcome unless `includeCalls: true` makes it the full `Outcome` with the call log. Works with
 * `generateText`, `streamText`, `ToolLoopAgent` and useChat; pair it with `codemodeToolApproval`
 * to carry pauses through the AI SDK's own approval requests.
 *
 * @example
 * const result = await generateText({
 *   model,
 *   tools: { codemode: createCodemodeTool(runtime, { hints: { github: "Repos live under acme/." } }) },
 *   stopWhen: stepCountIs(5),
 *   prompt: "How many open issues does acme/web have?",
 * });
 */
export function createCodemodeTool(
  runtime: CodemodeRuntime,
  options: CodemodeToolOptions & { includeCalls: true },
): Tool<CodemodeToolInput, Outcome>;
export function createCodemodeTool(
  runtime: CodemodeRuntime,
  options?: CodemodeToolOptions & { includeCalls?: false },
): Tool<CodemodeToolInput, CodemodeToolOutput>;
export function createCodemodeTool(
  runtime: CodemodeRuntime,
  options?: CodemodeToolOptions,
): Tool<CodemodeToolInput, Outcome> | Tool<CodemodeToolInput, CodemodeToolOutput>;
export function createCodemodeTool(
  runtime: CodemodeRuntime,
  options: CodemodeToolOptions = {},
): Tool<CodemodeToolInput, Outcome> | Tool<CodemodeToolInput, CodemodeToolOutput> {
  checkArgument(USAGE, "runtime", runtime, TOOL_RUNTIME);
  checkOptions(USAGE, options, {
    description: STRING,
    hints: HINTS,
    approvedBy: STRING,
    strict: BOOLEAN,
    includeCalls: BOOLEAN,
    modelOutput: MODEL_OUTPUT,
  });
  const output = (outcome: Outcome) => codemodeToolOutput(outcome, options);
  const codemodeTool = tool({
    description: options.description ?? runtime.modelDescription(options.hints ? { hints: options.hints } : {}),
    inputSchema,
    ...(options.strict !== undefined ? { strict: options.strict } : {}),
    async execute({ code }, { toolCallId, messages }): Promise<Outcome | CodemodeToolOutput> {
      // A call whose pause went through the AI SDK's approval comes back approved: approve every
      // action the request showed, and resume.
      const approval = findPauseApproval(messages, toolCallId);
      if (approval) return output((await applyChatAnswer(runtime, approval, code, options.approvedBy)).outcome);
      // Otherwise the approval function may have run the code already; never run it twice.
      return output((await prerun(runtime, toolCallId, code).take()) ?? (await runtime.execute({ code })));
    },
    toModelOutput: ({ output: result }) => modelOutputOf(result, options),
  });
  return registerCodemodeTool(codemodeTool) as
    | Tool<CodemodeToolInput, Outcome>
    | Tool<CodemodeToolInput, CodemodeToolOutput>;
}
