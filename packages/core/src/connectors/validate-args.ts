import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import { Ajv2019 } from "ajv/dist/2019.js";
import { Ajv2020 } from "ajv/dist/2020.js";
import formatsModule from "ajv-formats";
import { errorMessage } from "../error-message.js";
import { describeAjvErrors, formatPath, invalidArgumentsMessage, problemsMessage } from "./argument-problems.js";
import type { JsonSchema, StandardSchemaV1, ToolDefinition } from "./define-connector.js";
import { linearRegExp } from "./linear-regexp.js";

/** The outcome of checking one call's arguments: the value to hand to `execute`, or why not. */
export type ArgsValidation = { ok: true; value: unknown } | { ok: false; message: string };

/** Checks one call's arguments against its tool's `inputSchema` (R-CON-2). */
/** Answers synchronously when the schema allows it, so the runtime can refuse a call before pausing for it. */
export type ArgsValidator = (args: unknown) => ArgsValidation | Promise<ArgsValidation>;

/**
 * Makes the host-side argument check for one tool (R-CON-2). A JSON Schema is compiled once per
 * schema object (ajv, draft-07, 2019-09 or 2020-12); a Standard Schema (zod 4, valibot…) is asked
 * through `~standard.validate`, and its output becomes the value `execute` receives, so zod
 * transforms and defaults apply. A tool without `inputSchema` accepts anything.
 *
 * For a JSON Schema whose top-level type is "object", a call without an argument is checked as
 * `{}`: `github.list_repos()` is how a model calls a tool whose properties are all optional.
 *
 * @example
 * const check = createArgsValidator("github.create_issue", {
 *   inputSchema: { type: "object", properties: { title: { type: "string" } }, required: ["title"] },
 * });
 * await check({ title: "Crash on start" }); // { ok: true, value: { title: "Crash on start" } }
 * await check({});
 * // { ok: false, message: "Invalid arguments for github.create_issue:\n- args.title: missing required property" }
 */
export function createArgsValidator(path: string, tool: Pick<ToolDefinition, "inputSchema">): ArgsValidator {
  return createValidator(path, tool.inputSchema, ARGUMENTS);
}

/**
 * Makes the host-side check of one tool's result against its `outputSchema` (R-CN-OA): a result
 * that breaks it is a tool error the program can catch (`TOOL_OUTPUT_INVALID: …`), never handed
 * to the program. A Standard Schema's output is what the program gets. A tool without
 * `outputSchema` returns anything.
 *
 * @example
 * const check = createResultValidator("shop.get_order", { outputSchema: { type: "object", required: ["id"] } });
 * await check({});
 * // { ok: false, message: "TOOL_OUTPUT_INVALID: the result of shop.get_order does not match its outputSchema:\n- result.id: missing required property" }
 */
export function createResultValidator(path: string, tool: Pick<ToolDefinition, "outputSchema">): ArgsValidator {
  return createValidator(path, tool.outputSchema, RESULT);
}

/** What a validator checks, and how its failures read. */
interface Subject {
  schemaName: "inputSchema" | "outputSchema";
  /**
   * Whether `format` is checked. Arguments: yes, they are the program's. Results: no, a format is
   * what the API documents, and real APIs stray from it (a date-time without a zone, a relative
   * URI) in answers a program can use; the shape is what the generated types promise.
   */
  formats: boolean;
  /** How the checked value is named in problem paths (`args.title`, `result.id`). */
  root: string;
  invalid(path: string, lines: string[]): string;
  unreadable(path: string, error: unknown): string;
}

const ARGUMENTS: Subject = {
  schemaName: "inputSchema",
  formats: true,
  root: "args",
  invalid: invalidArgumentsMessage,
  unreadable: (path, error) => `Could not check the arguments of ${path}: ${errorMessage(error)}`,
};

/** The stable code a result that breaks its tool's `outputSchema` is reported with. */
export const TOOL_OUTPUT_INVALID = "TOOL_OUTPUT_INVALID";

const RESULT: Subject = {
  schemaName: "outputSchema",
  formats: false,
  root: "result",
  invalid: (path, lines) =>
    problemsMessage(`${TOOL_OUTPUT_INVALID}: the result of ${path} does not match its outputSchema`, lines),
  unreadable: (path, error) => `${TOOL_OUTPUT_INVALID}: could not check the result of ${path}: ${errorMessage(error)}`,
};

function createValidator(path: string, schema: JsonSchema | StandardSchemaV1 | undefined, subject: Subject) {
  if (schema === undefined) return (value: unknown): ArgsValidation => ({ ok: true, value });
  if (isStandardSchema(schema)) return (value: unknown) => validateStandard(path, schema, value, subject);
  return (value: unknown) => validateJson(path, schema, value, subject);
}

/**
 * Configuration problems of a tool's `inputSchema`, as sentences naming the tool; empty when it
 * compiles. The runtime calls this at creation so a broken schema fails there, not on the first
 * call. Compiling here also fills the cache the validator uses.
 *
 * @example
 * schemaProblems("github.create_issue", { inputSchema: { type: "strnig" } });
 * // ['tool "github.create_issue" has an inputSchema that does not compile: schema is invalid: …']
 */
export function schemaProblems(path: string, tool: Pick<ToolDefinition, "inputSchema" | "outputSchema">): string[] {
  const problems: string[] = [];
  for (const name of ["inputSchema", "outputSchema"] as const) {
    const schema = tool[name];
    if (schema === undefined || isStandardSchema(schema)) continue;
    if (typeof schema !== "object" || schema === null || Array.isArray(schema)) {
      problems.push(`tool "${path}" has an ${name} that is neither a JSON Schema object nor a Standard Schema`);
      continue;
    }
    const compiled = compileJsonSchema(schema, name === "inputSchema");
    if ("problem" in compiled)
      problems.push(`tool "${path}" has an ${name} that does not compile: ${compiled.problem}`);
  }
  return problems;
}

// ——— Standard Schema ———

function isStandardSchema(schema: unknown): schema is StandardSchemaV1 {
  if ((typeof schema !== "object" && typeof schema !== "function") || schema === null) return false;
  const standard = (schema as { "~standard"?: { validate?: unknown } })["~standard"];
  return typeof standard === "object" && standard !== null && typeof standard.validate === "function";
}

function validateStandard(
  path: string,
  schema: StandardSchemaV1,
  args: unknown,
  subject: Subject,
): ArgsValidation | Promise<ArgsValidation> {
  const unreadable = (error: unknown): ArgsValidation => ({ ok: false, message: subject.unreadable(path, error) });
  let result: ReturnType<StandardSchemaV1["~standard"]["validate"]>;
  try {
    result = schema["~standard"].validate(args);
  } catch (error) {
    return unreadable(error);
  }
  if (result instanceof Promise) return result.then((settled) => standardOutcome(path, settled, subject), unreadable);
  return standardOutcome(path, result, subject);
}

function standardOutcome(
  path: string,
  result: Awaited<ReturnType<StandardSchemaV1["~standard"]["validate"]>>,
  subject: Subject,
): ArgsValidation {
  if (result.issues === undefined) return { ok: true, value: result.value };
  const lines = result.issues.map((issue) => `${formatPath(standardPath(issue.path), subject.root)}: ${issue.message}`);
  return { ok: false, message: subject.invalid(path, lines) };
}

function standardPath(path: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }> | undefined): PropertyKey[] {
  return (path ?? []).map((segment) => (typeof segment === "object" && segment !== null ? segment.key : segment));
}

// ——— JSON Schema ———

type CompiledSchema = { validate: ValidateFunction } | { problem: string };

// Keyed by the schema object, so each tool's schema is compiled once however many validators exist.
const compiledSchemas = {
  formats: new WeakMap<object, CompiledSchema>(),
  lenient: new WeakMap<object, CompiledSchema>(),
};

/**
 * Compiled schemas by their JSON text, the newest last: an MCP server that lists the same tools
 * again (every `list_changed`) gets new objects with the same content, and must not make the host
 * compile and keep them again. Bounded, so a server sending new schemas cannot grow it for ever.
 */
const compiledByContent = new Map<string, CompiledSchema>(); // keyed by mode and JSON text
const MAX_COMPILED_BY_CONTENT = 1_000;

type Dialect = "draft-07" | "2019-09" | "2020-12";

/**
 * One ajv instance per dialect, replaced after `MAX_COMPILES_PER_INSTANCE` compiles: ajv keeps
 * each distinct pattern it has seen for the instance's life, so an instance is not kept for ever.
 */
const sharedInstances = new Map<string, { ajv: Ajv; compiles: number }>();
const MAX_COMPILES_PER_INSTANCE = 1_000;

// Keywords that only exist from 2019-09 on: a schema without `$schema` that uses them is modern.
const MODERN_KEYWORDS = new Set([
  "$defs",
  "prefixItems",
  "dependentRequired",
  "dependentSchemas",
  "unevaluatedProperties",
  "unevaluatedItems",
  "$dynamicRef",
  "$dynamicAnchor",
  "$anchor",
]);

function createInstance(dialect: Dialect, formats: boolean): Ajv {
  // strict: false because real schemas (MCP servers, generators) carry vendor keywords;
  // verbose: true so errors carry the failing value and schema for readable messages;
  // a linear-time engine for `pattern`, whose input the model's program picks (R-SB-3).
  const options = {
    allErrors: true,
    strict: false,
    verbose: true,
    logger: false,
    validateFormats: formats,
    code: { regExp: linearRegExp },
  } as const;
  const instance =
    dialect === "2020-12" ? new Ajv2020(options) : dialect === "2019-09" ? new Ajv2019(options) : new Ajv(options);
  formatsModule.default(instance);
  return instance;
}

function sharedInstance(dialect: Dialect, formats: boolean): Ajv {
  const key = `${dialect}:${formats}`;
  let shared = sharedInstances.get(key);
  if (!shared || shared.compiles >= MAX_COMPILES_PER_INSTANCE) {
    shared = { ajv: createInstance(dialect, formats), compiles: 0 };
    sharedInstances.set(key, shared);
  }
  shared.compiles++;
  return shared.ajv;
}

function dialectOf(schema: JsonSchema): { dialect: Dialect; schema: JsonSchema } {
  const declared = typeof schema.$schema === "string" ? schema.$schema : undefined;
  if (declared?.includes("2020-12")) return { dialect: "2020-12", schema };
  if (declared?.includes("2019-09")) return { dialect: "2019-09", schema };
  if (declared?.includes("draft-07")) return { dialect: "draft-07", schema };
  // Older or unknown dialects are read as draft-07 (the common ground of tool schemas); a
  // keyword that means something else there is reported by the compile step.
  const { $schema: _ignored, ...rest } = schema;
  return { dialect: usesModernKeywords(rest) ? "2020-12" : "draft-07", schema: declared === undefined ? schema : rest };
}

function usesModernKeywords(value: unknown): boolean {
  if (typeof value !== "object" || value === null) return false;
  if (Array.isArray(value)) return value.some(usesModernKeywords);
  return Object.entries(value).some(([key, child]) => MODERN_KEYWORDS.has(key) || usesModernKeywords(child));
}

function compileJsonSchema(schema: JsonSchema, formats = true): CompiledSchema {
  const byObject = formats ? compiledSchemas.formats : compiledSchemas.lenient;
  const cached = byObject.get(schema);
  if (cached) return cached;
  const text = contentKey(schema);
  const content = text === undefined ? undefined : `${formats ? "f" : "l"}${text}`;
  let compiled = content === undefined ? undefined : compiledByContent.get(content);
  if (compiled) compiledByContent.delete(content!);
  else compiled = compileFresh(schema, formats);
  if (content !== undefined) {
    compiledByContent.set(content, compiled);
    if (compiledByContent.size > MAX_COMPILED_BY_CONTENT)
      compiledByContent.delete(compiledByContent.keys().next().value!);
  }
  byObject.set(schema, compiled);
  return compiled;
}

function compileFresh(schema: JsonSchema, formats: boolean): CompiledSchema {
  try {
    const { dialect, schema: readable } = dialectOf(schema);
    // Ajv registers schemas by `$id`; two tools sharing an `$id` must not collide.
    const instance =
      typeof readable.$id === "string" ? createInstance(dialect, formats) : sharedInstance(dialect, formats);
    const validate = instance.compile(readable);
    // The validator keeps what it needs; ajv's own cache would keep the schema for the instance's life.
    instance.removeSchema(readable);
    return { validate };
  } catch (error) {
    return { problem: errorMessage(error) };
  }
}

/** The schema's JSON text, or undefined when it has none (a cycle, a BigInt): then it is cached by object only. */
function contentKey(schema: JsonSchema): string | undefined {
  try {
    return JSON.stringify(schema);
  } catch {
    return undefined;
  }
}

function validateJson(
  path: string,
  schema: JsonSchema,
  checked: unknown,
  subject: Subject,
): ArgsValidation | Promise<ArgsValidation> {
  const compiled = compileJsonSchema(schema, subject.formats);
  if ("problem" in compiled)
    return {
      ok: false,
      message: `${path} cannot be called: its ${subject.schemaName} does not compile (${compiled.problem})`,
    };
  const value = checked === undefined && subject === ARGUMENTS && acceptsObject(schema) ? {} : checked;
  const failed = (error: unknown): ArgsValidation => {
    const errors = (error as { errors?: ErrorObject[] }).errors;
    if (!Array.isArray(errors)) return { ok: false, message: subject.unreadable(path, error) };
    return jsonOutcome(path, value, errors, subject);
  };
  let result: unknown;
  try {
    result = compiled.validate(value);
  } catch (error) {
    return failed(error);
  }
  // A schema with `$async: true` resolves, or rejects with the errors.
  if (result instanceof Promise) return result.then(() => jsonOutcome(path, value, null, subject), failed);
  return jsonOutcome(path, value, result ? null : compiled.validate.errors, subject);
}

function jsonOutcome(
  path: string,
  value: unknown,
  errors: ErrorObject[] | null | undefined,
  subject: Subject,
): ArgsValidation {
  if (!errors || errors.length === 0) return { ok: true, value };
  return { ok: false, message: subject.invalid(path, describeAjvErrors(errors, value, subject.root)) };
}

function acceptsObject(schema: JsonSchema): boolean {
  return schema.type === "object" || (Array.isArray(schema.type) && schema.type.includes("object"));
}
