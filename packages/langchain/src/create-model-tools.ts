import type { CodemodeRuntime, Outcome } from "@codemode/core";
import type { ModelOutputOptions } from "@codemode/core/adapters";
import { checkArgument, checkOptions, MODEL_OUTPUT, runtimeWith } from "@codemode/core/adapters";
import { DynamicStructuredTool, tool } from "@langchain/core/tools";
import type { JSONSchema } from "@langchain/core/utils/json_schema";
import { codemodeToolContent } from "./tool-messages.js";

export interface ModelToolsOptions {
  /** How much console output the model sees (default 50 lines of 2 000 characters). */
  modelOutput?: ModelOutputOptions;
}

export type ModelTool = DynamicStructuredTool<JSONSchema, unknown, unknown, [string, Outcome]>;

/**
 * The tools the model calls directly (a tool's `callers` includes "model", R-CN-OA), as LangChain
 * tools to put next to the Code Mode tool, named `connector_method`, with the tool's description
 * and JSON Schema. Each call is a one-call run (`runtime.callTool`) through the same log and
 * approvals as a program's: a gated call pauses, and `codemodeApprovalMiddleware` interrupts for
 * it as for a program's pause. The content is the model-facing outcome, the artifact the outcome.
 *
 * @example
 * const agent = createAgent({
 *   model,
 *   tools: [createCodemodeTool(runtime), ...createModelTools(runtime)],
 *   middleware: [codemodeApprovalMiddleware(runtime)],
 *   checkpointer,
 * });
 */
export function createModelTools(runtime: CodemodeRuntime, options: ModelToolsOptions = {}): ModelTool[] {
  const usage = "createModelTools(runtime, options)";
  checkArgument(usage, "runtime", runtime, runtimeWith("callTool", "modelTools"));
  checkOptions(usage, options, { modelOutput: MODEL_OUTPUT });
  return runtime.modelTools().map((model) => {
    const made = tool(
      async (args: unknown): Promise<[string, Outcome]> => {
        const outcome = await runtime.callTool({ tool: model.tool, args });
        return [codemodeToolContent(outcome, options.modelOutput), outcome];
      },
      {
        name: model.name,
        description: model.description ?? `Calls ${model.tool}.`,
        schema: model.inputSchema as JSONSchema,
        responseFormat: "content_and_artifact",
      },
    );
    if (!(made instanceof DynamicStructuredTool)) throw new TypeError("createModelTools: expected a structured tool");
    return made as ModelTool;
  });
}
