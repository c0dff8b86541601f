import type { CodemodeRuntime, Outcome } from "@codemode/core";
import { modelFacingOutcome, toModelJson, type ModelOutputOptions } from "@codemode/core/adapters";
import { jsonSchema, tool, type JSONValue, type Tool } from "ai";
import { findPauseApproval, prerun, resumeApproved } from "./codemode-tool-approval.js";

/** What the model sends: one program. */
export interface CodemodeToolInput {
  code: string;
}

export interface CodemodeToolOptions {
  /** Replaces the description the runtime writes (`runtime.modelDescription()`, R-AI-2). */
  description?: string;
  /** Extra text per connector name, appended to its line of the description. Default none. */
  hints?: Readonly<Record<string, string>>;
  /** How much console output the model sees. Default 50 lines of at most 2 000 characters. */
  modelOutput?: ModelOutputOptions;
  /** Recorded as `by` on calls approved through AI SDK approval responses (R-AP-7). Default none. */
  approvedBy?: string;
}

const inputSchema = jsonSchema<CodemodeToolInput>(
  {
    type: "object",
    properties: { code: { type: "string", description: "The program: an async arrow function, e.g. `async () => { … return result; }`." } },
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

/**
 * The Code Mode runtime as an AI SDK tool (R-AI-1): the model sends `{ code }`, the tool's output
 * is the runtime's `Outcome`. It never throws: a pause, a replay divergence or a failing program
 * is an outcome the model reads. The model sees `modelFacingOutcome` — no `calls` (the audit log
 * stays with the application, in the step's tool result) and bounded logs. Works with
 * `generateText`, `streamText` and `ToolLoopAgent`; pair it with `codemodeToolApproval` to carry
 * pauses through the AI SDK's own approval requests.
 *
 * @example
 * const result = await generateText({
 *   model,
 *   tools: { codemode: createCodemodeTool(runtime, { hints: { github: "Repos live under acme/." } }) },
 *   stopWhen: stepCountIs(5),
 *   prompt: "How many open issues does acme/web have?",
 * });
 */
export function createCodemodeTool(runtime: CodemodeRuntime, options: CodemodeToolOptions = {}): Tool<CodemodeToolInput, Outcome> {
  return tool({
    description: options.description ?? runtime.modelDescription(options.hints ? { hints: options.hints } : {}),
    inputSchema,
    async execute({ code }, { toolCallId, messages }): Promise<Outcome> {
      // A call whose pause went through the AI SDK's approval comes back approved: resume it.
      const approval = findPauseApproval(messages, toolCallId);
      if (approval) return resumeApproved(runtime, approval, code, options.approvedBy);
      // Otherwise the approval function may have run the code already; never run it twice.
      return (await prerun(runtime, toolCallId, code).take()) ?? runtime.execute({ code });
    },
    toModelOutput: ({ output }) => ({ type: "json", value: toModelJson(modelFacingOutcome(output, options.modelOutput)) as JSONValue }),
  });
}
