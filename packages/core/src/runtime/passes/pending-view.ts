import type { JsonSchema, ToolDefinition } from "../../connectors/define-connector.js";
import { jsonSchemaOf } from "../../connectors/standard-json-schema.js";
import type { StoredEntry } from "../../log/interface.js";
import type { PendingAction } from "../../outcome.js";
import type { RuntimeContext } from "../context/index.js";
import { toPendingAction } from "../records/index.js";
import { passTools } from "./run-pass.js";

/** Each tool's input schema as JSON Schema, converted once (a zod schema's conversion is not free). */
const inputSchemas = new WeakMap<ToolDefinition, JsonSchema | undefined>();

/**
 * A pending action with what a person needs to decide it: the tool's description, and its input
 * schema as JSON Schema (for a form that edits the arguments), as this runtime configures the
 * tool now. Both are absent for a tool this runtime does not have, or one without them.
 */
export function pendingActionOf(context: RuntimeContext, executionId: string, entry: StoredEntry): PendingAction {
  const action = toPendingAction(executionId, entry);
  const tool = passTools(context)(entry.connector, entry.method);
  if (!tool) return action;
  if (typeof tool.description === "string" && tool.description !== "") action.description = tool.description;
  const schema = inputSchemaOf(tool);
  if (schema) action.inputSchema = schema;
  return action;
}

function inputSchemaOf(tool: ToolDefinition): JsonSchema | undefined {
  if (inputSchemas.has(tool)) return inputSchemas.get(tool);
  let schema: JsonSchema | undefined;
  try {
    const converted = jsonSchemaOf(tool.inputSchema, "input", undefined);
    schema = typeof converted === "object" && converted !== null ? converted : undefined;
  } catch {
    // A schema that cannot be said in JSON Schema: the person sees the arguments without it.
    schema = undefined;
  }
  inputSchemas.set(tool, schema);
  return schema;
}
