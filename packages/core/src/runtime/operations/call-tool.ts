import { randomUUID } from "node:crypto";
import { callNeedsApproval, type JsonSchema, modelMayCall } from "../../connectors/define-connector.js";
import { jsonSchemaOf } from "../../connectors/standard-json-schema.js";
import { errorMessage } from "../../error-message.js";
import { errorOutcome, type Outcome } from "../../outcome.js";
import type { RuntimeContext } from "../context/index.js";
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
  const found = typeof path === "string" ? toolAt(context, path) : undefined;
  if (!found || !modelMayCall(found.tool)) {
    const reason = !found
      ? `there is no tool ${JSON.stringify(path)}; name one as "connector.method"`
      : `${path as string} is not called by the model directly: give it callers: ["model"] (or ["code", "model"])`;
    return errorOutcome(randomUUID(), "NOT_FOUND", `callTool: ${reason}`, { calls: [] });
  }
  let argsText: string;
  try {
    argsText = input.args === undefined ? "" : (JSON.stringify(input.args) ?? "");
  } catch (error) {
    return errorOutcome(
      randomUUID(),
      "NOT_SERIALIZABLE",
      `callTool: the arguments of ${path}: ${errorMessage(error)}`,
      {
        calls: [],
      },
    );
  }
  const code = directCode(`${found.connector}.${found.method}`, argsText);
  return execute(context, { code, ...(input.by !== undefined ? { by: input.by } : {}) }, path as string);
}

/**
 * The program a direct call of `tool` ("connector.method") with `args` runs, as `callTool` stores
 * it: adapters that hand a chat's answer back check that a run runs this very code.
 */
export function directCallCode(tool: string, args: unknown): string {
  return directCode(tool, args === undefined ? "" : (JSON.stringify(args) ?? ""));
}

function directCode(tool: string, argsText: string): string {
  return `async () => ${tool}(${argsText})`;
}

/** The tools the model may call directly, in the connectors' order. */
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

function toolAt(context: RuntimeContext, path: string) {
  const dot = path.indexOf(".");
  if (dot <= 0) return undefined;
  const connector = path.slice(0, dot);
  const method = path.slice(dot + 1);
  const tools = context.connectors.get(connector)?.tools;
  const tool = tools && Object.hasOwn(tools, method) ? tools[method] : undefined;
  return tool ? { connector, method, tool } : undefined;
}
