/**
 * TypeScript declarations generated from tool schemas, for `codemode.describe` (R-SN-3) and for
 * the model's tool description. Pure functions: the same schemas always give the same text, and
 * the text is meant to compile (`strict`), so that the model reads types it could type-check.
 */

import { docComment, indentLines, isPlainObject, pascalCase, propertyKey, textLines } from "./declaration-text.js";
import type { Connector, JsonSchema, StandardSchemaV1, ToolDefinition } from "./define-connector.js";
import { jsonSchemaToType } from "./json-schema-to-type.js";
import { jsonSchemaOf } from "./standard-json-schema.js";

export { jsonSchemaToType, type SchemaToTypeOptions } from "./json-schema-to-type.js";

export interface DeclarationOptions {
  /** Levels of nested objects and arrays written before `unknown` (see `SchemaToTypeOptions`). Default 8. */
  maxDepth?: number;
  /**
   * Turns a Standard Schema into JSON Schema, for libraries that offer no Standard JSON Schema
   * (`~standard.jsonSchema`). Return `undefined` to fall back to the built-in ways, then `unknown`.
   */
  convertStandardSchema?: (schema: StandardSchemaV1, direction: "input" | "output") => JsonSchema | undefined;
}

export interface ToolDeclarationOptions extends DeclarationOptions {
  /**
   * Receives the named types of `$ref`ed definitions; print them in
   * `declare namespace <connectorName> { … }`, which the method's types refer to. Without it,
   * definitions are written inline (see `SchemaToTypeOptions.namedTypes`).
   */
  namedTypes?: Map<string, string>;
}

/**
 * The declaration of one connector method, as a member of the connector's `declare const`: the
 * tool's description (and whether it needs approval) as a doc comment, its argument from
 * `inputSchema` and its result from `outputSchema` (`unknown` without one). A Standard Schema is
 * turned into JSON Schema by `options.convertStandardSchema`, else through `~standard.jsonSchema`
 * (zod 4.2+ and other libraries that implement Standard JSON Schema), else zod's `toJSONSchema`;
 * when none of them can, its type is `unknown`.
 *
 * @example
 * toolDeclaration("github", "create_issue", {
 *   description: "Create an issue.",
 *   inputSchema: { type: "object", properties: { repo: { type: "string" }, title: { type: "string" } }, required: ["repo", "title"] },
 *   outputSchema: { type: "object", properties: { number: { type: "integer" } }, required: ["number"] },
 *   execute: async () => ({ number: 1 }),
 * });
 * // → "/** Create an issue. *\/\ncreate_issue(args: { repo: string; title: string }): Promise<{ number: number }>;"
 */
export function toolDeclaration(
  connectorName: string,
  methodName: string,
  tool: ToolDefinition,
  options: ToolDeclarationOptions = {},
): string {
  const input = jsonSchemaOf(tool.inputSchema, "input", options.convertStandardSchema);
  const output = jsonSchemaOf(tool.outputSchema, "output", options.convertStandardSchema);
  const typeOptions = { maxDepth: options.maxDepth, namedTypes: options.namedTypes, typeNamespace: connectorName };
  const argumentType =
    input === undefined
      ? "{ [key: string]: unknown }"
      : jsonSchemaToType(input, { ...typeOptions, rootTypeName: `${pascalCase(methodName)}Args` });
  const resultType =
    output === undefined
      ? "unknown"
      : jsonSchemaToType(output, { ...typeOptions, rootTypeName: `${pascalCase(methodName)}Result` });
  const argument = `args${input === undefined || acceptsNoArgument(input) ? "?" : ""}: ${argumentType}`;
  return `${docComment(methodDocumentation(tool))}${propertyKey(methodName)}(${argument}): Promise<${resultType}>;`;
}

export interface ConnectorDeclarationOptions extends DeclarationOptions {
  /** Declare only these methods (for describing one method on its own). Default: all. */
  methods?: readonly string[];
}

/**
 * The declaration of a connector global: `declare const github: { …methods… };` with the
 * connector's instructions as its doc comment, preceded by `declare namespace github { … }` when
 * its schemas have `$ref`ed definitions. The text compiles on its own.
 *
 * @example
 * connectorDeclaration(github);
 * // → "/** Use for GitHub issues. *\/\ndeclare const github: {\n  create_issue(args: …): Promise<…>;\n};"
 */
export function connectorDeclaration(connector: Connector, options: ConnectorDeclarationOptions = {}): string {
  const namedTypes = new Map<string, string>();
  const selected = options.methods === undefined ? undefined : new Set(options.methods);
  const members: string[] = [];
  for (const [methodName, tool] of Object.entries(connector.tools)) {
    if (selected !== undefined && !selected.has(methodName)) continue;
    members.push(toolDeclaration(connector.name, methodName, tool, { ...options, namedTypes }));
  }
  const blocks: string[] = [];
  if (namedTypes.size > 0) {
    const aliases = [...namedTypes].map(([name, type]) => indentLines(`type ${name} = ${type};`));
    blocks.push(`declare namespace ${connector.name} {\n${aliases.join("\n")}\n}`);
  }
  const body = members.length === 0 ? "{}" : `{\n${members.map(indentLines).join("\n")}\n}`;
  blocks.push(`${docComment(textLines(connector.instructions))}declare const ${connector.name}: ${body};`);
  return blocks.join("\n");
}

/** The `codemode` global the sandbox offers besides the connectors (R-SB-1, R-SN-2, R-SN-3). */
export const CODEMODE_DECLARATION = `declare namespace codemode {
  /** One connector method or saved snippet that matches a search. */
  interface SearchMatch {
    kind: "method" | "snippet";
    /** What to describe or call: "github.create_issue", or a snippet's name. */
    path: string;
    score: number;
    requiresApproval: boolean;
    description?: string;
  }
  interface SearchResult {
    query: string;
    /** Best match first. */
    results: SearchMatch[];
    /** More matched than were listed. */
    truncated: boolean;
  }
  /** What describe answers: a declaration to read, a snippet's source, or an error. */
  type Description =
    | { kind: "connector"; path: string; description?: string; methods: string[]; declaration: string }
    | { kind: "method"; path: string; description?: string; requiresApproval: boolean | "depends on arguments"; declaration: string }
    | { kind: "snippet"; path: string; description?: string; source: string; connectors: string[]; inputSchema?: unknown }
    | { error: string };
}
declare const codemode: {
  /** Ranks connector methods and saved snippets for a query in plain words. */
  search(query: string): Promise<codemode.SearchResult>;
  /** TypeScript declarations of a method ("github.create_issue"), a connector ("github") or a snippet. */
  describe(target: string): Promise<codemode.Description>;
  /** Runs fn once and records its value: later passes get the recorded value without running fn. */
  step<T>(name: string, fn: () => T | Promise<T>): Promise<T>;
  /** Runs a saved snippet with input; its calls join this execution's log. Resolves to { error } when it is missing. */
  run(name: string, input?: unknown): Promise<unknown>;
};`;

/**
 * Everything the model's code sees as globals: every connector's declaration and `codemode`.
 *
 * @example
 * const declarations = runtimeDeclarations([github, payments]);
 */
export function runtimeDeclarations(connectors: Iterable<Connector>, options: DeclarationOptions = {}): string {
  const blocks = [...connectors].map((connector) => connectorDeclaration(connector, options));
  return [...blocks, CODEMODE_DECLARATION].join("\n\n");
}

function methodDocumentation(tool: ToolDefinition): string[] {
  const lines = textLines(tool.description);
  if (tool.requiresApproval === true)
    lines.push("Needs approval: the execution pauses at this call until a person approves it.");
  else if (typeof tool.requiresApproval === "function")
    lines.push(
      "May need approval, depending on the arguments: the execution then pauses at this call until a person approves it.",
    );
  return lines;
}

/** Whether a call may leave out the argument: an object schema with nothing required. */
function acceptsNoArgument(schema: JsonSchema | boolean): boolean {
  if (schema === true) return true;
  if (!isPlainObject(schema)) return false;
  if (
    ["$ref", "anyOf", "oneOf", "allOf", "enum", "const", "items", "prefixItems"].some((keyword) =>
      Object.hasOwn(schema, keyword),
    )
  )
    return false;
  if (schema.type !== undefined && schema.type !== "object") return false;
  return !Array.isArray(schema.required) || schema.required.length === 0;
}
