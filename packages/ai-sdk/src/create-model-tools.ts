import type { CodemodeRuntime, Outcome } from "@codemode/core";
import {
  BOOLEAN,
  checkArgument,
  checkOptions,
  directCallCode,
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

export interface ModelToolsOptions extends ToolOutputOptions {
  /** Recorded as `by` on the calls approved through AI SDK approval responses (R-AP-7). Default none. */
  approvedBy?: string;
}

const USAGE = "createModelTools(runtime, options)";
const TOOLS_RUNTIME = runtimeWith("callTool", "modelTools", "decide", "execution", "outcome");

/**
 * The tools the model calls directly (a tool's `callers` includes "model", R-CN-OA), as AI SDK
 * tools to put next to the Code Mode tool, named `connector_method`, with the tool's description
 * and input schema. Each call is a one-call run (`runtime.callTool`) through the same log and
 * approvals as a program's: a gated tool's call pauses, and with `codemodeToolApproval` as the
 * generic `toolApproval` function it becomes the AI SDK's own approval request, signed and bound
 * to its pause; the approved call runs once. The output is the model-facing outcome, as the Code
 * Mode tool's (its `result` is the tool's result).
 *
 * @example
 * const result = await generateText({
 *   model,
 *   tools: { codemode: createCodemodeTool(runtime), ...createModelTools(runtime) },
 *   toolApproval: codemodeToolApproval(runtime),
 *   messages,
 * });
 */
export function createModelTools(
  runtime: CodemodeRuntime,
  options: ModelToolsOptions = {},
): Record<string, Tool<unknown, Outcome | CodemodeToolOutput>> {
  checkArgument(USAGE, "runtime", runtime, TOOLS_RUNTIME);
  checkOptions(USAGE, options, { approvedBy: STRING, includeCalls: BOOLEAN, modelOutput: MODEL_OUTPUT });
  const output = (outcome: Outcome) => codemodeToolOutput(outcome, options);
  const tools: Record<string, Tool<unknown, Outcome | CodemodeToolOutput>> = {};
  for (const model of runtime.modelTools()) {
    const direct = model.tool;
    const made = tool({
      ...(model.description !== undefined ? { description: model.description } : {}),
      inputSchema: jsonSchema<unknown>(model.inputSchema),
      async execute(args, { toolCallId, messages }): Promise<Outcome | CodemodeToolOutput> {
        const code = directCallCode(direct, args);
        // The call came back approved through the AI SDK's approval request: decide what it showed.
        const approval = findPauseApproval(messages, toolCallId);
        if (approval) return output((await applyChatAnswer(runtime, approval, code, options.approvedBy)).outcome);
        // The approval function may have run the call already; never run it twice.
        const start = () => runtime.callTool({ tool: direct, args });
        return output((await prerun(runtime, toolCallId, code, start).take()) ?? (await start()));
      },
      toModelOutput: ({ output: result }) => modelOutputOf(result, options),
    });
    tools[model.name] = registerCodemodeTool(made, direct);
  }
  return tools;
}
