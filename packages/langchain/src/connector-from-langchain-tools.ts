import type { JsonSchema, StandardSchemaV1 } from "@codemode/core";
import { type Connector, defineConnector, type ToolDefinition } from "@codemode/core";
import {
  BOOLEAN,
  checkArgument,
  checkOptions,
  type Expectation,
  methodNamesFor,
  recordOf,
  STRING,
  shapeOf,
} from "@codemode/core/adapters";
import { ToolMessage } from "@langchain/core/messages";
import type { StructuredToolInterface } from "@langchain/core/tools";
import { toJsonSchema } from "@langchain/core/utils/json_schema";
import { isInteropZodSchema } from "@langchain/core/utils/types";
import { FUNCTION } from "./check-options.js";

/** Whether a call needs a human's approval: always, or decided per call from its arguments. */
export type ApprovalRule = boolean | ((args: Record<string, unknown>) => boolean);

export interface LangChainConnectorOptions {
  /** Told to the model in the Code Mode tool's description. */
  instructions?: string;
  /**
   * Which tools pause for approval, by LangChain tool name (LangChain tools have no such flag).
   * A function decides per call; if it throws, the call needs approval. Default: none.
   */
  requiresApproval?: Readonly<Record<string, ApprovalRule>>;
  /**
   * A tool result that is a string holding a JSON object or array reaches the program parsed
   * (LangChain tools often return JSON text for the model). Default true.
   */
  parseJsonResults?: boolean;
}

/** What the program's calls reach: the LangChain tool's `invoke`, with this in `config.configurable.codemode`. */
export interface LangChainCallContext {
  executionId: string;
  seq: number;
  /** The same on every attempt of this call; pass it to APIs that dedupe. */
  idempotencyKey: string;
}

const TOOLS: Expectation = {
  expected: "an array of LangChain tools, e.g. [getForecast, sendAlert]",
  accepts: Array.isArray,
};
const LANGCHAIN_TOOL = shapeOf(
  { name: STRING, invoke: FUNCTION },
  "a LangChain tool (with a name and invoke, as tool() makes)",
  ["name", "invoke"],
);
const REQUIRES_APPROVAL = recordOf(
  {
    expected: "true, false or a function of the arguments",
    accepts: (value) => BOOLEAN.accepts(value) || FUNCTION.accepts(value),
  },
  "an object of true, false or functions by tool name, e.g. { send_alert: true }",
);

/**
 * Existing LangChain tools as one Code Mode connector, unchanged (R-CON-5): each tool becomes a
 * method (names that are not identifiers are made into one: `get-weather` → `get_weather`), its
 * zod or JSON schema feeds the runtime's argument check (R-CON-2), its description is shown by
 * search and describe, and a call runs the tool's own `invoke(args)`. A tool that throws rejects
 * the call in the program with its message (R-CON-3).
 *
 * @example
 * const weather = connectorFromLangChainTools("weather", [getForecast, getAlerts], {
 *   requiresApproval: { send_alert: true },
 * });
 * const runtime = createCodemodeRuntime({ connectors: [weather] });
 */
export function connectorFromLangChainTools(
  name: string,
  tools: ReadonlyArray<StructuredToolInterface>,
  options: LangChainConnectorOptions = {},
): Connector {
  const usage = "connectorFromLangChainTools(name, tools, options)";
  checkArgument(usage, "name", name, STRING);
  checkArgument(usage, "tools", tools, TOOLS);
  for (const [index, langchainTool] of tools.entries())
    checkArgument(usage, `tools[${index}]`, langchainTool, LANGCHAIN_TOOL);
  checkOptions(usage, options, {
    instructions: STRING,
    requiresApproval: REQUIRES_APPROVAL,
    parseJsonResults: BOOLEAN,
  });
  const toolNames = tools.map((langchainTool) => langchainTool.name);
  const duplicates = toolNames.filter((toolName, index) => toolNames.indexOf(toolName) !== index);
  if (duplicates.length > 0)
    throw new TypeError(
      `connectorFromLangChainTools("${name}"): two tools are named ${[...new Set(duplicates)].map((toolName) => `"${toolName}"`).join(", ")}`,
    );
  const unknown = Object.keys(options.requiresApproval ?? {}).filter((toolName) => !toolNames.includes(toolName));
  if (unknown.length > 0)
    throw new TypeError(
      `connectorFromLangChainTools("${name}"): requiresApproval names no tool: ${unknown.map((toolName) => `"${toolName}"`).join(", ")}`,
    );

  const methodNames = methodNamesFor(toolNames);
  const parseJson = options.parseJsonResults ?? true;
  const definitions: Record<string, ToolDefinition> = {};
  for (const langchainTool of tools) {
    const definition: ToolDefinition = {
      description: langchainTool.description,
      execute: async (args, context) => {
        const codemode: LangChainCallContext = {
          executionId: context.executionId,
          seq: context.seq,
          idempotencyKey: context.idempotencyKey,
        };
        const output: unknown = await langchainTool.invoke(args as never, { configurable: { codemode } });
        return resultOf(output, parseJson);
      },
    };
    const inputSchema = inputSchemaOf(langchainTool.schema);
    if (inputSchema !== undefined) definition.inputSchema = inputSchema;
    const rule = options.requiresApproval?.[langchainTool.name];
    if (rule !== undefined) definition.requiresApproval = rule;
    definitions[methodNames.get(langchainTool.name)!] = definition;
  }
  return defineConnector({
    name,
    ...(options.instructions ? { instructions: options.instructions } : {}),
    tools: definitions,
  });
}

/**
 * A zod schema is a Standard Schema and goes to the runtime as it is (validation, and describe's
 * types); a JSON Schema object passes through; a zod 3 schema older than Standard Schema becomes
 * JSON Schema.
 */
function inputSchemaOf(schema: unknown): JsonSchema | StandardSchemaV1 | undefined {
  if ((typeof schema !== "object" && typeof schema !== "function") || schema === null) return undefined;
  if ("~standard" in schema) return schema as StandardSchemaV1;
  if (isInteropZodSchema(schema)) return toJsonSchema(schema) as JsonSchema;
  return schema as JsonSchema;
}

/** What the program gets: the tool's output; a message's content; JSON text parsed when asked. */
function resultOf(output: unknown, parseJson: boolean): unknown {
  const value = ToolMessage.isInstance(output) ? output.content : output;
  if (!parseJson || typeof value !== "string") return value;
  const text = value.trim();
  if (!(text.startsWith("{") && text.endsWith("}")) && !(text.startsWith("[") && text.endsWith("]"))) return value;
  try {
    return JSON.parse(text);
  } catch {
    return value;
  }
}
