import {
  type Connector,
  defineConnector,
  type JsonSchema,
  type StandardSchemaV1,
  type ToolDefinition,
} from "@codemode/core";
import { checkArgument, checkOptions, methodNamesFor, RECORD, STRING } from "@codemode/core/adapters";
import type { ToolSet } from "ai";

export interface AiSdkConnectorOptions {
  /** Told to the model in the Code Mode tool description. Default none. */
  instructions?: string;
  /** The AI SDK tool `context` every tool's execute (and `needsApproval`) receives. Default `{}`. */
  context?: Record<string, unknown>;
}

// The parts of an AI SDK tool a connector uses, read loosely: a ToolSet mixes tool kinds.
type ExecutionOptions = { toolCallId: string; messages: []; context: Record<string, unknown> };
interface AiSdkTool {
  description?: string | ((options: { context: Record<string, unknown> }) => unknown);
  inputSchema?: unknown;
  outputSchema?: unknown;
  needsApproval?: boolean | ((input: unknown, options: ExecutionOptions) => unknown);
  execute?: (input: unknown, options: ExecutionOptions) => unknown;
}

/**
 * An AI SDK `ToolSet` as a Code Mode connector, without rewriting the tools (R-CON-5). Input
 * schemas feed argument validation and the generated types: zod and other Standard Schemas as
 * they are, `jsonSchema(…)` through its JSON Schema. Descriptions are carried. `needsApproval`
 * becomes `requiresApproval`; a function of the input is asked per call, synchronously — one that
 * returns a promise cannot be awaited there, so that call asks for approval. Each execute gets
 * `toolCallId` = the call's idempotency key (the same on every attempt), `messages: []` and
 * `context`; a streaming execute's last value is the result. Names that are not JavaScript
 * identifiers are changed (`get-weather` → `get_weather`). Tools without `execute` (client or
 * provider tools) are refused, since Code Mode runs every call on the host.
 *
 * @example
 * const crm = connectorFromAiSdkTools("crm", { findCustomer, sendInvoice }, { instructions: "Customers and invoices." });
 * const runtime = createCodemodeRuntime({ connectors: [crm] });
 */
export function connectorFromAiSdkTools(
  name: string,
  toolSet: ToolSet,
  options: AiSdkConnectorOptions = {},
): Connector {
  const usage = "connectorFromAiSdkTools(name, toolSet, options)";
  checkArgument(usage, "name", name, STRING);
  checkArgument(usage, "toolSet", toolSet, {
    ...RECORD,
    expected: "an object of AI SDK tools by name, e.g. { findCustomer, sendInvoice }",
  });
  checkOptions(usage, options, { instructions: STRING, context: RECORD });
  const entries = Object.entries(toolSet) as Array<[string, AiSdkTool]>;
  const withoutExecute = entries
    .filter(([, aiTool]) => typeof aiTool?.execute !== "function")
    .map(([toolName]) => `"${toolName}"`);
  if (withoutExecute.length > 0) {
    throw new TypeError(
      `connectorFromAiSdkTools("${name}"): ${withoutExecute.join(", ")} ${withoutExecute.length > 1 ? "have" : "has"} no execute function. ` +
        "Code Mode runs every connector call on the host, so a tool that the client or the provider executes cannot be a connector method; leave it out of the tool set or give it an execute.",
    );
  }
  const context = options.context ?? {};
  const methodNames = methodNamesFor(entries.map(([toolName]) => toolName));
  const tools: Record<string, ToolDefinition> = {};
  for (const [toolName, aiTool] of entries) tools[methodNames.get(toolName)!] = toolDefinition(aiTool, context);
  return defineConnector({ name, ...(options.instructions ? { instructions: options.instructions } : {}), tools });
}

function toolDefinition(aiTool: AiSdkTool, context: Record<string, unknown>): ToolDefinition {
  const execute = aiTool.execute!;
  const definition: ToolDefinition = {
    execute: async (args, toolContext) =>
      lastValue(await execute(args, { toolCallId: toolContext.idempotencyKey, messages: [], context })),
  };
  const description =
    typeof aiTool.description === "function" ? describeSafely(aiTool.description, context) : aiTool.description;
  if (typeof description === "string") definition.description = description;
  const inputSchema = schemaOf(aiTool.inputSchema);
  if (inputSchema) definition.inputSchema = inputSchema;
  const outputSchema = schemaOf(aiTool.outputSchema);
  if (outputSchema) definition.outputSchema = outputSchema;
  const rule = aiTool.needsApproval;
  if (typeof rule === "boolean") definition.requiresApproval = rule;
  if (typeof rule === "function") {
    definition.requiresApproval = (args) => {
      const answer: unknown = rule(args, { toolCallId: "", messages: [], context });
      if (!isPromiseLike(answer)) return answer !== false;
      // Code Mode decides a pause as the call is issued; it cannot wait, so the call asks.
      Promise.resolve(answer).catch(() => undefined);
      return true;
    };
  }
  return definition;
}

/** A Standard Schema as it is; an AI SDK schema (`jsonSchema`, `zodSchema`, lazy) as JSON Schema. */
function schemaOf(schema: unknown): JsonSchema | StandardSchemaV1 | undefined {
  if (typeof schema === "function") return schemaOf(schema());
  if (typeof schema !== "object" || schema === null) return undefined;
  if ("~standard" in schema) return schema as StandardSchemaV1;
  if (!("jsonSchema" in schema)) return undefined;
  const json: unknown = schema.jsonSchema;
  if (typeof json === "object" && json !== null && !isPromiseLike(json)) return json as JsonSchema;
  // A JSON Schema that only arrives later: check through the AI SDK schema's own validate.
  const validate = (schema as { validate?: (value: unknown) => PromiseLike<AiSdkValidation> | AiSdkValidation })
    .validate;
  return validate ? standardFromValidate(validate) : undefined;
}

type AiSdkValidation = { success: true; value: unknown } | { success: false; error: Error };

function standardFromValidate(
  validate: (value: unknown) => PromiseLike<AiSdkValidation> | AiSdkValidation,
): StandardSchemaV1 {
  return {
    "~standard": {
      version: 1,
      vendor: "ai-sdk",
      validate: async (value) => {
        const result = await validate(value);
        return result.success ? { value: result.value } : { issues: [{ message: result.error.message }] };
      },
    },
  };
}

function describeSafely(
  describe: (options: { context: Record<string, unknown> }) => unknown,
  context: Record<string, unknown>,
): unknown {
  try {
    return describe({ context });
  } catch {
    return undefined;
  }
}

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return (
    (typeof value === "object" || typeof value === "function") &&
    value !== null &&
    typeof (value as { then?: unknown }).then === "function"
  );
}

async function lastValue(result: unknown): Promise<unknown> {
  if (typeof result !== "object" || result === null || !(Symbol.asyncIterator in result)) return result;
  let last: unknown;
  for await (const value of result as AsyncIterable<unknown>) last = value;
  return last;
}
