import { randomUUID } from "node:crypto";
import { callNeedsApproval, type JsonSchema, modelMayCall } from "../../connectors/define-connector.js";
import { jsonSchemaOf } from "../../connectors/standard-json-schema.js";
import { errorMessage } from "../../error-message.js";
import { errorOutcome, type Outcome } from "../../outcome.js";
import type { RuntimeContext } from "../context/index.js";
import { passTools, splitToolPath } from "../passes/index.js";
import { execute } from "./execute.js";

/** What `runtime.callTool` takes: the tool, its one argument, and who asked. */
export interface ToolCallInput {
  /** "connector.method" of a tool whose `callers` include "model". */
  tool: string;
  args?: unknown;
  /** Who asked for the call (kept on the run like `execute({ by })`). */
  by?: string;
}

/** A tool the model may call directly, as adapters list it next to the Code Mode tool. */
export interface ModelTool {
  /** Its name in a framework's tool set: `connector_method`. */
  name: string;
  /** "connector.method": what `callTool` takes. */
  tool: string;
  description?: string;
  /** JSON Schema of its argument (a Standard Schema converted); an open object when it has none. */
  inputSchema: JsonSchema;
  outputSchema?: JsonSchema;
  /** The tool changes nothing (`readOnly`). */
  readOnly: boolean;
  /** Whether a call with these arguments pauses for approval (the tool's `requiresApproval`). */
  needsApproval(args: unknown): boolean;
}

/**
 * A direct call of a tool by the model (R-CN-OA): a one-call run, `async () => connector.method(args)`,
 * stored, logged and approved like any other run (a gated tool pauses it; `approve`, `decide`,
 * the inbox and the adapters' approvals answer it), and allowed to call a tool only the model
 * may call. NOT_FOUND for a tool that is unknown or not the model's to call.
 */
export async function callTool(context: RuntimeContext, input: ToolCallInput): Promise<Outcome> {
  const path: unknown = (input as { tool?: unknown } | undefined)?.tool;
  const names = typeof path === "string" ? splitToolPath(path) : undefined;
  const tool = names && passTools(context)(names.connector, names.method);
  if (!tool || !modelMayCall(tool)) {
    const reason = !tool
      ? `there is no tool ${JSON.stringify(path)}; name one as "connector.method"`
      : `${path as string} is not called by the model directly: give it callers: ["model"] (or ["code", "model"])`;
    return errorOutcome(randomUUID(), "NOT_FOUND", `callTool: ${reason}`, { calls: [] });
  }
  let code: string;
  try {
    code = directCallCode(path as string, input.args);
  } catch (error) {
    const message = `callTool: the arguments of ${path}: ${errorMessage(error)}`;
    return errorOutcome(randomUUID(), "NOT_SERIALIZABLE", message, { calls: [] });
  }
  return execute(context, { code, ...(input.by !== undefined ? { by: input.by } : {}) }, path as string);
}

/**
 * The program a direct call of `tool` ("connector.method") with `args` runs, as `callTool` stores
 * it: adapters that hand a chat's answer back check that a run runs this very code.
 */
export function directCallCode(tool: string, args: unknown): string {
  return `async () => ${tool}(${args === undefined ? "" : (JSON.stringify(args) ?? "")})`;
}

/**
 * The tools the model may call directly, in the connectors' order. The connectors do not change
 * after creation: the handle lists them once (their schemas converted once) and answers that list.
 */
export function modelTools(context: RuntimeContext): ModelTool[] {
  const listed: ModelTool[] = [];
  for (const connector of context.connectors.values()) {
    for (const [method, tool] of Object.entries(connector.tools)) {
      if (!modelMayCall(tool)) continue;
      const inputSchema = jsonSchemaOf(tool.inputSchema, "input", undefined);
      const outputSchema = jsonSchemaOf(tool.outputSchema, "output", undefined);
      listed.push({
        name: `${connector.name}_${method}`,
        tool: `${connector.name}.${method}`,
        ...(typeof tool.description === "string" ? { description: tool.description } : {}),
        inputSchema: typeof inputSchema === "object" ? inputSchema : { type: "object" },
        ...(typeof outputSchema === "object" ? { outputSchema } : {}),
        readOnly: tool.readOnly === true,
        needsApproval: (args) => callNeedsApproval(tool, args),
      });
    }
  }
  return listed;
}
