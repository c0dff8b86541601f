/**
 * TypeScript declarations generated from tool schemas, for `codemode.describe` (R-SN-3) and for
 * the model's tool description. Pure functions: the same schemas always give the same text, and
 * the text is meant to compile (`strict`), so that the model reads types it could type-check.
 */
import type { Connector, JsonSchema, StandardSchemaV1, ToolDefinition } from "./define-connector.js";

export interface SchemaToTypeOptions {
  /**
   * Levels of objects and arrays written, one inside the other, before a deeper object or array
   * becomes `unknown`; counted from the schema, or from the definition a named type is written
   * for. Default 8.
   */
  maxDepth?: number;
  /**
   * Collects `$ref`ed definitions as named types (name → type expression), so that a recursive
   * schema can refer to itself by name; print each as `type Name = …;` beside the expression.
   * One map shared by several schemas gives a definition of the same name and shape one name.
   * Without it, definitions are written inline and a reference back into a definition that is
   * being written becomes `unknown`.
   */
  namedTypes?: Map<string, string>;
  /**
   * Put before a named type where the expression refers to it (`github.TreeNode`), for named
   * types printed inside `declare namespace github { … }`. Default: none (bare names).
   */
  typeNamespace?: string;
  /** The name a `$ref: "#"` (the whole schema refers to itself) gets. Default "Root". */
  rootTypeName?: string;
}

/**
 * Writes a JSON Schema (draft 2020-12 or 07, with OpenAPI's `nullable`) as a TypeScript type
 * expression. Whatever a type cannot say becomes `unknown`, never a guess.
 *
 * @example
 * jsonSchemaToType({ type: "object", properties: { repo: { type: "string" } }, required: ["repo"] });
 * // → "{ repo: string }"
 */
export function jsonSchemaToType(schema: JsonSchema | boolean, options: SchemaToTypeOptions = {}): string {
  const conversion: Conversion = {
    root: schema,
    maxDepth: options.maxDepth ?? DEFAULT_MAX_DEPTH,
    namedTypes: options.namedTypes,
    typeNamespace: options.typeNamespace,
    rootTypeName: options.rootTypeName ?? "Root",
    refNames: new Map(),
    namesBeingWritten: new Set(),
    refsBeingExpanded: new Set(),
    ancestors: new Set(),
  };
  const type = schemaType(schema, conversion, 0, true);
  // A schema that refers to itself as a whole is declared once under its name.
  const rootName = conversion.refNames.get("#");
  return rootName === undefined ? type.text : qualifiedName(rootName, conversion);
}

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
export function toolDeclaration(connectorName: string, methodName: string, tool: ToolDefinition, options: ToolDeclarationOptions = {}): string {
  const input = jsonSchemaOf(tool.inputSchema, "input", options);
  const output = jsonSchemaOf(tool.outputSchema, "output", options);
  const typeOptions = { maxDepth: options.maxDepth, namedTypes: options.namedTypes, typeNamespace: connectorName };
  const argumentType =
    input === undefined ? "{ [key: string]: unknown }" : jsonSchemaToType(input, { ...typeOptions, rootTypeName: `${pascalCase(methodName)}Args` });
  const resultType = output === undefined ? "unknown" : jsonSchemaToType(output, { ...typeOptions, rootTypeName: `${pascalCase(methodName)}Result` });
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

const DEFAULT_MAX_DEPTH = 8;
/** Wider than this on one line, an object type is written one member per line. */
const ONE_LINE_WIDTH = 80;
/** Longer annotation values (zod's date-time pattern…) help nobody in a doc comment. */
const ANNOTATION_WIDTH = 100;
const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

interface Conversion {
  root: unknown;
  maxDepth: number;
  namedTypes: Map<string, string> | undefined;
  typeNamespace: string | undefined;
  rootTypeName: string;
  /** `$ref` → the named type written for it, for this root schema. */
  refNames: Map<string, string>;
  /** Names reserved for definitions whose bodies are being written. */
  namesBeingWritten: Set<string>;
  /** Inline mode: references being expanded, to stop at recursion. */
  refsBeingExpanded: Set<string>;
  /** Schema objects being written, one inside the other: a JavaScript object cycle stops there. */
  ancestors: Set<object>;
}

/** A type expression and how tightly it binds, to know where it needs parentheses. */
interface TypeText {
  text: string;
  precedence: "union" | "intersection" | "primary";
  /** The members of a union or intersection, to flatten nested ones. */
  members?: readonly TypeText[];
}

const UNKNOWN: TypeText = { text: "unknown", precedence: "primary" };
const NEVER: TypeText = { text: "never", precedence: "primary" };
const NULL: TypeText = { text: "null", precedence: "primary" };
const UNDEFINED: TypeText = { text: "undefined", precedence: "primary" };
const KEYWORD_TYPES: ReadonlyMap<string, TypeText> = new Map([
  ["string", { text: "string", precedence: "primary" }],
  ["number", { text: "number", precedence: "primary" }],
  ["integer", { text: "number", precedence: "primary" }],
  ["boolean", { text: "boolean", precedence: "primary" }],
  ["null", NULL],
]);

function schemaType(schema: unknown, conversion: Conversion, depth: number, qualify: boolean): TypeText {
  if (schema === true) return UNKNOWN;
  if (schema === false) return NEVER;
  if (!isPlainObject(schema) || conversion.ancestors.has(schema)) return UNKNOWN;
  conversion.ancestors.add(schema);
  try {
    return composedType(schema, conversion, depth, qualify);
  } finally {
    conversion.ancestors.delete(schema);
  }
}

function composedType(schema: Record<string, unknown>, conversion: Conversion, depth: number, qualify: boolean): TypeText {
  const parts: TypeText[] = [];
  if (typeof schema.$ref === "string") parts.push(referenceType(schema.$ref, conversion, depth, qualify));
  if (Object.hasOwn(schema, "const")) parts.push(literalType(schema.const));
  else if (Array.isArray(schema.enum)) parts.push(unionOf(schema.enum.map(literalType)));
  else {
    const base = declaredType(schema, conversion, depth, qualify);
    if (base !== undefined) parts.push(base);
  }
  for (const keyword of ["anyOf", "oneOf"] as const) {
    const branches = schema[keyword];
    if (Array.isArray(branches)) parts.push(unionOf(branches.map((branch) => schemaType(branch, conversion, depth, qualify))));
  }
  if (Array.isArray(schema.allOf)) parts.push(...schema.allOf.map((part) => schemaType(part, conversion, depth, qualify)));
  const type = parts.length === 0 ? UNKNOWN : intersectionOf(parts);
  return schema.nullable === true ? unionOf([type, NULL]) : type;
}

/** The type from `type` (a name or a list of names), or inferred from object or array keywords. */
function declaredType(schema: Record<string, unknown>, conversion: Conversion, depth: number, qualify: boolean): TypeText | undefined {
  let typeNames: string[];
  if (typeof schema.type === "string") typeNames = [schema.type];
  else if (Array.isArray(schema.type)) typeNames = schema.type.filter((name): name is string => typeof name === "string");
  else if (["properties", "additionalProperties", "patternProperties", "required"].some((keyword) => Object.hasOwn(schema, keyword))) typeNames = ["object"];
  else if (Object.hasOwn(schema, "items") || Object.hasOwn(schema, "prefixItems")) typeNames = ["array"];
  else typeNames = [];
  if (typeNames.length === 0) return undefined;
  return unionOf(
    typeNames.map((typeName) => {
      // Only containers count against the depth limit: a string at the bottom costs nothing.
      if ((typeName === "object" || typeName === "array") && depth >= conversion.maxDepth) return UNKNOWN;
      if (typeName === "object") return objectType(schema, conversion, depth, qualify);
      if (typeName === "array") return arrayType(schema, conversion, depth, qualify);
      return KEYWORD_TYPES.get(typeName) ?? UNKNOWN;
    }),
  );
}

function objectType(schema: Record<string, unknown>, conversion: Conversion, depth: number, qualify: boolean): TypeText {
  const properties = isPlainObject(schema.properties) ? schema.properties : {};
  const required = new Set(Array.isArray(schema.required) ? schema.required.filter((name) => typeof name === "string") : []);
  const members: { documentation: string; text: string }[] = [];
  const memberTypes: TypeText[] = [];
  let anyOptional = false;
  for (const [name, propertySchema] of Object.entries(properties)) {
    const type = schemaType(propertySchema, conversion, depth + 1, qualify);
    const optional = !required.has(name);
    anyOptional ||= optional;
    memberTypes.push(type);
    members.push({ documentation: docComment(schemaDocumentation(propertySchema)), text: `${propertyKey(name)}${optional ? "?" : ""}: ${type.text}` });
  }
  for (const name of required) {
    if (Object.hasOwn(properties, name)) continue;
    memberTypes.push(UNKNOWN);
    members.push({ documentation: "", text: `${propertyKey(name)}: unknown` });
  }
  const indexTypes: TypeText[] = [];
  const additional = schema.additionalProperties;
  if (additional === true || isPlainObject(additional)) indexTypes.push(schemaType(additional, conversion, depth + 1, qualify));
  if (isPlainObject(schema.patternProperties)) {
    for (const patternSchema of Object.values(schema.patternProperties)) indexTypes.push(schemaType(patternSchema, conversion, depth + 1, qualify));
  }
  if (indexTypes.length > 0) {
    // TypeScript requires every named property to fit the index signature.
    const fitting = [...indexTypes, ...memberTypes, ...(anyOptional ? [UNDEFINED] : [])];
    members.push({ documentation: "", text: `[key: string]: ${unionOf(fitting).text}` });
  } else if (members.length === 0) {
    members.push({ documentation: "", text: `[key: string]: ${additional === false ? "never" : "unknown"}` });
  }
  const oneLine = `{ ${members.map((member) => member.text).join("; ")} }`;
  if (members.every((member) => member.documentation === "") && !oneLine.includes("\n") && oneLine.length <= ONE_LINE_WIDTH) {
    return { text: oneLine, precedence: "primary" };
  }
  const lines = members.map((member) => indentLines(`${member.documentation}${member.text};`));
  return { text: `{\n${lines.join("\n")}\n}`, precedence: "primary" };
}

function arrayType(schema: Record<string, unknown>, conversion: Conversion, depth: number, qualify: boolean): TypeText {
  // Tuples: `prefixItems` + `items` for the rest (2020-12), or an `items` array + `additionalItems` (draft 07).
  const prefix = Array.isArray(schema.prefixItems) ? schema.prefixItems : Array.isArray(schema.items) ? schema.items : undefined;
  if (prefix !== undefined) {
    const rest: unknown = Array.isArray(schema.prefixItems) ? schema.items : schema.additionalItems;
    // Without minItems every listed element is taken as present: that is how tuples are meant.
    const minItems = typeof schema.minItems === "number" ? schema.minItems : prefix.length;
    const elements = prefix.map((element, index) => {
      const type = schemaType(element, conversion, depth + 1, qualify);
      if (index < minItems) return type.text;
      return type.precedence === "primary" ? `${type.text}?` : `(${type.text})?`;
    });
    const closed = rest === false || (typeof schema.maxItems === "number" && schema.maxItems <= prefix.length);
    if (!closed) elements.push(`...${arrayOf(rest === undefined ? UNKNOWN : schemaType(rest, conversion, depth + 1, qualify)).text}`);
    return { text: `[${elements.join(", ")}]`, precedence: "primary" };
  }
  if (schema.items === false) return { text: "[]", precedence: "primary" };
  return arrayOf(schema.items === undefined ? UNKNOWN : schemaType(schema.items, conversion, depth + 1, qualify));
}

function referenceType(ref: string, conversion: Conversion, depth: number, qualify: boolean): TypeText {
  const target = resolvePointer(conversion.root, ref);
  if (target === undefined) return UNKNOWN;
  if (conversion.namedTypes === undefined) {
    if (conversion.refsBeingExpanded.has(ref)) return UNKNOWN;
    conversion.refsBeingExpanded.add(ref);
    try {
      return schemaType(target, conversion, depth, qualify);
    } finally {
      conversion.refsBeingExpanded.delete(ref);
    }
  }
  const name = conversion.refNames.get(ref) ?? nameDefinition(ref, target, conversion, conversion.namedTypes);
  return { text: qualify ? qualifiedName(name, conversion) : name, precedence: "primary" };
}

/**
 * Declares a definition under its own name, or under a name already declared with the same body
 * (shared `$defs` of several tools), or with a number added when that name means something else.
 */
function nameDefinition(ref: string, target: unknown, conversion: Conversion, namedTypes: Map<string, string>): string {
  const base = ref === "#" ? pascalCase(conversion.rootTypeName) : pascalCase(ref.slice(ref.lastIndexOf("/") + 1));
  for (let suffix = 1; ; suffix++) {
    const candidate = suffix === 1 ? base : /\d$/.test(base) ? `${base}_${suffix}` : `${base}${suffix}`;
    if (conversion.namesBeingWritten.has(candidate)) continue;
    const existing = namedTypes.get(candidate);
    conversion.namesBeingWritten.add(candidate);
    conversion.refNames.set(ref, candidate);
    try {
      if (existing === undefined) {
        namedTypes.set(candidate, "unknown"); // keeps the name's place while its body is written
        namedTypes.set(candidate, definitionBody(target, conversion));
        return candidate;
      }
      const savedTypes = new Map(namedTypes);
      const savedRefs = new Map(conversion.refNames);
      if (definitionBody(target, conversion) === existing) return candidate;
      replaceContents(namedTypes, savedTypes);
      replaceContents(conversion.refNames, savedRefs);
      conversion.refNames.delete(ref);
    } finally {
      conversion.namesBeingWritten.delete(candidate);
    }
  }
}

/** A named type's body starts at depth 0 and apart from where it is referenced (the root may be one). */
function definitionBody(target: unknown, conversion: Conversion): string {
  const ancestors = conversion.ancestors;
  conversion.ancestors = new Set();
  try {
    return schemaType(target, conversion, 0, false).text;
  } finally {
    conversion.ancestors = ancestors;
  }
}

/** A local JSON Pointer (`#`, `#/$defs/Node`, `#/definitions/Node`); external references are not followed. */
function resolvePointer(root: unknown, ref: string): unknown {
  if (ref === "#") return root;
  if (!ref.startsWith("#/")) return undefined;
  let current = root;
  for (const encoded of ref.slice(2).split("/")) {
    let segment: string;
    try {
      segment = decodeURIComponent(encoded).replaceAll("~1", "/").replaceAll("~0", "~");
    } catch {
      return undefined;
    }
    if (typeof current !== "object" || current === null || !Object.hasOwn(current, segment)) return undefined;
    current = (current as Record<string, unknown>)[segment];
  }
  return current;
}

function literalType(value: unknown): TypeText {
  if (typeof value === "string" || typeof value === "boolean" || value === null) return { text: JSON.stringify(value), precedence: "primary" };
  if (typeof value === "number") {
    if (!Number.isFinite(value)) return UNKNOWN;
    // A negative literal is a prefix expression: `(-1)[]` needs the parentheses.
    return { text: String(value), precedence: value < 0 ? "intersection" : "primary" };
  }
  if (Array.isArray(value)) return { text: `[${value.map((element) => literalType(element).text).join(", ")}]`, precedence: "primary" };
  if (isPlainObject(value)) {
    const members = Object.entries(value).map(([key, member]) => `${propertyKey(key)}: ${literalType(member).text}`);
    return { text: members.length === 0 ? "{ [key: string]: never }" : `{ ${members.join("; ")} }`, precedence: "primary" };
  }
  return UNKNOWN;
}

function unionOf(types: readonly TypeText[]): TypeText {
  const members = distinct(types.flatMap((type) => (type.precedence === "union" && type.members !== undefined ? type.members : [type])));
  if (members.some((member) => member.text === "unknown")) return UNKNOWN;
  const possible = members.filter((member) => member.text !== "never");
  if (possible.length === 0) return NEVER;
  if (possible.length === 1) return possible[0]!;
  return { text: possible.map((member) => member.text).join(" | "), precedence: "union", members: possible };
}

function intersectionOf(types: readonly TypeText[]): TypeText {
  const members = distinct(types.flatMap((type) => (type.precedence === "intersection" && type.members !== undefined ? type.members : [type])));
  if (members.some((member) => member.text === "never")) return NEVER;
  const constraining = members.filter((member) => member.text !== "unknown");
  if (constraining.length === 0) return UNKNOWN;
  if (constraining.length === 1) return constraining[0]!;
  const text = constraining.map((member) => (member.precedence === "union" ? `(${member.text})` : member.text)).join(" & ");
  return { text, precedence: "intersection", members: constraining };
}

function arrayOf(element: TypeText): TypeText {
  return { text: element.precedence === "primary" ? `${element.text}[]` : `(${element.text})[]`, precedence: "primary" };
}

function distinct(types: readonly TypeText[]): TypeText[] {
  const seen = new Set<string>();
  return types.filter((type) => !seen.has(type.text) && seen.add(type.text));
}

/** A property schema's description (or title) and its constraints, as doc comment lines. */
function schemaDocumentation(schema: unknown): string[] {
  if (!isPlainObject(schema)) return [];
  const lines = textLines(typeof schema.description === "string" ? schema.description : typeof schema.title === "string" ? schema.title : undefined);
  for (const keyword of ANNOTATED_KEYWORDS) {
    const value = schema[keyword];
    let text: string | undefined;
    if (typeof value === "string") text = value;
    else if (typeof value === "number" && Number.isFinite(value) && Math.abs(value) !== Number.MAX_SAFE_INTEGER) text = String(value);
    else if (value === true && keyword === "uniqueItems") text = "";
    if (keyword === "default" && value !== undefined) text = JSON.stringify(value);
    if (text !== undefined && text.length <= ANNOTATION_WIDTH) lines.push(`@${keyword}${text === "" ? "" : ` ${text}`}`);
  }
  if (schema.deprecated === true) lines.push("@deprecated");
  return lines;
}
/** Written with their values; zod writes ±MAX_SAFE_INTEGER bounds for every integer, which say nothing. */
const ANNOTATED_KEYWORDS = [
  "format",
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "multipleOf",
  "minLength",
  "maxLength",
  "pattern",
  "minItems",
  "maxItems",
  "uniqueItems",
  "default",
] as const;

function methodDocumentation(tool: ToolDefinition): string[] {
  const lines = textLines(tool.description);
  if (tool.requiresApproval === true) lines.push("Needs approval: the execution pauses at this call until a person approves it.");
  else if (typeof tool.requiresApproval === "function") lines.push("May need approval, depending on the arguments: the execution then pauses at this call until a person approves it.");
  return lines;
}

/** `/** … *\/` and a line break, or "" for no lines; a `*\/` in the text cannot end the comment. */
function docComment(lines: readonly string[]): string {
  if (lines.length === 0) return "";
  const escaped = lines.map((line) => line.replaceAll("*/", "*\\/"));
  if (escaped.length === 1) return `/** ${escaped[0]} */\n`;
  return `/**\n${escaped.map((line) => (line === "" ? " *" : ` * ${line}`)).join("\n")}\n */\n`;
}

function textLines(text: string | undefined): string[] {
  if (text === undefined) return [];
  const trimmed = text.trim();
  return trimmed === "" ? [] : trimmed.split(/\r\n|\r|\n/).map((line) => line.trimEnd());
}

/** The JSON Schema of a tool's schema: itself, or a Standard Schema's conversion; `true` when it has none. */
function jsonSchemaOf(schema: JsonSchema | StandardSchemaV1 | undefined, direction: "input" | "output", options: DeclarationOptions): JsonSchema | boolean | undefined {
  if (schema === undefined) return undefined;
  if (!isStandardSchema(schema)) return schema;
  return convertStandardSchema(schema, direction, options.convertStandardSchema) ?? true;
}

function isStandardSchema(schema: JsonSchema | StandardSchemaV1): schema is StandardSchemaV1 {
  const standard: unknown = (schema as Record<string, unknown>)["~standard"];
  return typeof standard === "object" && standard !== null;
}

/**
 * The caller's converter, then Standard JSON Schema (`~standard.jsonSchema.input/output`, zod 4.2+
 * and others), then zod 4's `toJSONSchema` method. Libraries throw for what JSON Schema cannot
 * express (a zod date, a transform): then the next way is tried, and in the end the type is unknown.
 */
function convertStandardSchema(
  schema: StandardSchemaV1,
  direction: "input" | "output",
  custom: DeclarationOptions["convertStandardSchema"],
): JsonSchema | undefined {
  const standard = schema["~standard"] as { vendor: string; jsonSchema?: unknown };
  const attempts: (() => unknown)[] = [
    () => custom?.(schema, direction),
    () => {
      const converter = standard.jsonSchema as { input?: unknown; output?: unknown } | undefined;
      const convert = converter?.[direction];
      return typeof convert === "function" ? convert.call(converter, { target: "draft-2020-12" }) : undefined;
    },
    () => {
      const toJsonSchema: unknown = (schema as unknown as Record<string, unknown>).toJSONSchema;
      return standard.vendor === "zod" && typeof toJsonSchema === "function" ? toJsonSchema.call(schema, { io: direction }) : undefined;
    },
  ];
  for (const attempt of attempts) {
    try {
      const converted = attempt();
      if (isPlainObject(converted)) return converted;
    } catch {
      // Try the next way.
    }
  }
  return undefined;
}

/** Whether a call may leave out the argument: an object schema with nothing required. */
function acceptsNoArgument(schema: JsonSchema | boolean): boolean {
  if (schema === true) return true;
  if (!isPlainObject(schema)) return false;
  if (["$ref", "anyOf", "oneOf", "allOf", "enum", "const", "items", "prefixItems"].some((keyword) => Object.hasOwn(schema, keyword))) return false;
  if (schema.type !== undefined && schema.type !== "object") return false;
  return !Array.isArray(schema.required) || schema.required.length === 0;
}

function propertyKey(name: string): string {
  return IDENTIFIER.test(name) ? name : JSON.stringify(name);
}

function qualifiedName(name: string, conversion: Conversion): string {
  return conversion.typeNamespace === undefined ? name : `${conversion.typeNamespace}.${name}`;
}

/** `create_issue` → `CreateIssue`, `__schema0` → `Schema0`. An upper-case start is never a keyword. */
function pascalCase(text: string): string {
  const words = text.split(/[^A-Za-z0-9]+/).filter((word) => word !== "");
  const joined = words.map((word) => word[0]!.toUpperCase() + word.slice(1)).join("");
  return joined === "" || /^\d/.test(joined) ? `Type${joined}` : joined;
}

function indentLines(text: string): string {
  return text
    .split("\n")
    .map((line) => (line === "" ? line : `  ${line}`))
    .join("\n");
}

function replaceContents<Key, Value>(target: Map<Key, Value>, source: ReadonlyMap<Key, Value>): void {
  target.clear();
  for (const [key, value] of source) target.set(key, value);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
