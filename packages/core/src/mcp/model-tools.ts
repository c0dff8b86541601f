import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import type { CodemodeRuntime } from "../runtime/handle/index.js";
import type { ModelTool } from "../runtime/operations/index.js";
import { outcomeSchema } from "./server-schemas.js";

/**
 * The tools the model calls directly (`callers` includes "model", R-CN-OA), as MCP tools of their
 * own beside `execute`: named `connector_method`, with the tool's description and input schema,
 * answering the outcome of the one-call run (`runtime.callTool`) as `execute` answers a program's.
 */
export function modelToolDescriptors(runtime: CodemodeRuntime): Tool[] {
  return modelToolsOf(runtime).map((model) => {
    const reads = model.readOnly;
    return {
      name: model.name,
      title: model.tool,
      description: model.description ?? `Calls ${model.tool}.`,
      inputSchema: { type: "object", ...model.inputSchema } as Tool["inputSchema"],
      outputSchema: outcomeSchema as Tool["outputSchema"],
      annotations: reads
        ? { readOnlyHint: true, openWorldHint: true }
        : { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
    };
  });
}

/** The model tool an MCP tool name names, if any. */
export function modelToolNamed(runtime: CodemodeRuntime, name: string): ModelTool | undefined {
  return modelToolsOf(runtime).find((model) => model.name === name);
}

function modelToolsOf(runtime: CodemodeRuntime): ModelTool[] {
  return typeof runtime.modelTools === "function" ? runtime.modelTools() : [];
}
