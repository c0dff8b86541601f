import type { CodemodeRuntime, Outcome } from "@codemode/core";
import type { ModelOutputOptions } from "@codemode/core/adapters";
import { checkArgument, checkOptions, HINTS, MODEL_OUTPUT, runtimeWith, STRING } from "@codemode/core/adapters";
import { DynamicStructuredTool, tool } from "@langchain/core/tools";
import type { JSONSchema } from "@langchain/core/utils/json_schema";
import { codemodeToolContent, DEFAULT_TOOL_NAME } from "./tool-messages.js";

export interface CodemodeToolOptions {
  /** The name the model calls the tool by. Default "codemode". */
  name?: string;
  /** Replaces the generated description. Default: `runtime.modelDescription({ hints })`. */
  description?: string;
  /** Extra text per connector name, appended to its line of the generated description. */
  hints?: Readonly<Record<string, string>>;
  /** How much console output the model sees (default 50 lines of 2 000 characters). */
  modelOutput?: ModelOutputOptions;
}

/**
 * The tool `createCodemodeTool` returns. Invoked with a tool call (as agents do) it answers a
 * `ToolMessage` whose artifact is the `Outcome`; invoked with plain `{ code }`, the content text.
 */
export type CodemodeTool = DynamicStructuredTool<JSONSchema, { code: string }, { code: string }, [string, Outcome]>;

const CODE_SCHEMA: JSONSchema = {
  type: "object",
  properties: {
    code: { type: "string", description: "The program: an async arrow function whose return value is the result." },
  },
  required: ["code"],
  additionalProperties: false,
};

/**
 * The Code Mode runtime as a LangChain structured tool (R-LC-1). The model sends `{ code }`; the
 * tool runs it as a new execution. Its content is the outcome as the model should see it (no call
 * log), its artifact the full `Outcome` (`responseFormat: "content_and_artifact"`). A pause or a
 * failure is a tool result, never a throw: the model reads it and tells the user.
 *
 * @example
 * const agent = createAgent({ model, tools: [createCodemodeTool(runtime)] });
 */
export function createCodemodeTool(runtime: CodemodeRuntime, options: CodemodeToolOptions = {}): CodemodeTool {
  const usage = "createCodemodeTool(runtime, options)";
  checkArgument(usage, "runtime", runtime, runtimeWith("execute", "modelDescription"));
  checkOptions(usage, options, { name: STRING, description: STRING, hints: HINTS, modelOutput: MODEL_OUTPUT });
  const codemodeTool = tool(
    async ({ code }: { code: string }): Promise<[string, Outcome]> => {
      const outcome = await runtime.execute({ code });
      return [codemodeToolContent(outcome, options.modelOutput), outcome];
    },
    {
      name: options.name ?? DEFAULT_TOOL_NAME,
      description: options.description ?? runtime.modelDescription(options.hints ? { hints: options.hints } : {}),
      schema: CODE_SCHEMA,
      responseFormat: "content_and_artifact",
    },
  );
  // tool() types a JSON-schema tool as a union with DynamicTool; an object schema makes it structured.
  if (!(codemodeTool instanceof DynamicStructuredTool))
    throw new TypeError("createCodemodeTool: expected a structured tool");
  return codemodeTool as CodemodeTool;
}
