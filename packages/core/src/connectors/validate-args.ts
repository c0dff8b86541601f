import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import { Ajv2019 } from "ajv/dist/2019.js";
import { Ajv2020 } from "ajv/dist/2020.js";
import formatsModule from "ajv-formats";
import type { JsonSchema, StandardSchemaV1, ToolDefinition } from "./define-connector.js";

/** The outcome of checking one call's arguments: the value to hand to `execute`, or why not. */
export type ArgsValidation = { ok: true; value: unknown } | { ok: false; message: string };

/** Checks one call's arguments against its tool's `inputSchema` (R-CON-2). */
/** Answers synchronously when the schema allows it, so the runtime can refuse a call before pausing for it. */
export type ArgsValidator = (args: unknown) => ArgsValidation | Promise<ArgsValidation>;

/** At most this many problems are listed in one message; the rest are counted. */
const MAX_LISTED_ISSUES = 5;

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
  const schema = tool.inputSchema;
  if (schema === undefined) return (args) => ({ ok: true, value: args });
  if (isStandardSchema(schema)) return (args) => validateStandard(path, schema, args);
  return (args) => validateJson(path, schema, args);
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
export function schemaProblems(path: string, tool: Pick<ToolDefinition, "inputSchema">): string[] {
  const schema = tool.inputSchema;
  if (schema === undefined || isStandardSchema(schema)) return [];
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) {
    return [`tool "${path}" has an inputSchema that is neither a JSON Schema object nor a Standard Schema`];
  }
  const compiled = compileJsonSchema(schema);
  return "problem" in compiled ? [`tool "${path}" has an inputSchema that does not compile: ${compiled.problem}`] : [];
}

// ——— Standard Schema ———

function isStandardSchema(schema: unknown): schema is StandardSchemaV1 {
  if ((typeof schema !== "object" && typeof schema !== "function") || schema === null) return false;
  const standard = (schema as { "~standard"?: { validate?: unknown } })["~standard"];
  return typeof standard === "object" && standard !== null && typeof standard.validate === "function";
}

function validateStandard(path: string, schema: StandardSchemaV1, args: unknown): ArgsValidation | Promise<ArgsValidation> {
  const unreadable = (error: unknown): ArgsValidation => ({ ok: false, message: `Could not check the arguments of ${path}: ${error instanceof Error ? error.message : String(error)}` });
  let result: ReturnType<StandardSchemaV1["~standard"]["validate"]>;
  try {
    result = schema["~standard"].validate(args);
  } catch (error) {
    return unreadable(error);
  }
  if (result instanceof Promise) return result.then((settled) => standardOutcome(path, settled), unreadable);
  return standardOutcome(path, result);
}

function standardOutcome(path: string, result: Awaited<ReturnType<StandardSchemaV1["~standard"]["validate"]>>): ArgsValidation {
  if (result.issues === undefined) return { ok: true, value: result.value };
  const lines = result.issues.map((issue) => `${formatPath(standardPath(issue.path))}: ${issue.message}`);
  return { ok: false, message: invalidArgumentsMessage(path, lines) };
}

function standardPath(path: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }> | undefined): PropertyKey[] {
  return (path ?? []).map((segment) => (typeof segment === "object" && segment !== null ? segment.key : segment));
}

// ——— JSON Schema ———

type CompiledSchema = { validate: ValidateFunction } | { problem: string };

// Keyed by the schema object, so each tool's schema is compiled once however many validators exist.
const compiledSchemas = new WeakMap<object, CompiledSchema>();

type Dialect = "draft-07" | "2019-09" | "2020-12";

const sharedInstances = new Map<Dialect, Ajv>();

// Keywords that only exist from 2019-09 on: a schema without `$schema` that uses them is modern.
const MODERN_KEYWORDS = new Set(["$defs", "prefixItems", "dependentRequired", "dependentSchemas", "unevaluatedProperties", "unevaluatedItems", "$dynamicRef", "$dynamicAnchor", "$anchor"]);

function createInstance(dialect: Dialect): Ajv {
  // strict: false because real schemas (MCP servers, generators) carry vendor keywords;
  // verbose: true so errors carry the failing value and schema for readable messages.
  const options = { allErrors: true, strict: false, verbose: true, logger: false } as const;
  const instance = dialect === "2020-12" ? new Ajv2020(options) : dialect === "2019-09" ? new Ajv2019(options) : new Ajv(options);
  formatsModule.default(instance);
  return instance;
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

function compileJsonSchema(schema: JsonSchema): CompiledSchema {
  const cached = compiledSchemas.get(schema);
  if (cached) return cached;
  let compiled: CompiledSchema;
  try {
    const { dialect, schema: readable } = dialectOf(schema);
    // Ajv registers schemas by `$id`; two tools sharing an `$id` must not collide.
    const hasId = typeof readable.$id === "string";
    let instance = hasId ? createInstance(dialect) : sharedInstances.get(dialect);
    if (!instance) {
      instance = createInstance(dialect);
      sharedInstances.set(dialect, instance);
    }
    compiled = { validate: instance.compile(readable) };
  } catch (error) {
    compiled = { problem: error instanceof Error ? error.message : String(error) };
  }
  compiledSchemas.set(schema, compiled);
  return compiled;
}

function validateJson(path: string, schema: JsonSchema, args: unknown): ArgsValidation | Promise<ArgsValidation> {
  const compiled = compileJsonSchema(schema);
  if ("problem" in compiled) return { ok: false, message: `${path} cannot be called: its inputSchema does not compile (${compiled.problem})` };
  const value = args === undefined && acceptsObject(schema) ? {} : args;
  const failed = (error: unknown): ArgsValidation => {
    const errors = (error as { errors?: ErrorObject[] }).errors;
    if (!Array.isArray(errors)) return { ok: false, message: `Could not check the arguments of ${path}: ${error instanceof Error ? error.message : String(error)}` };
    return jsonOutcome(path, value, errors);
  };
  let result: unknown;
  try {
    result = compiled.validate(value);
  } catch (error) {
    return failed(error);
  }
  // A schema with `$async: true` resolves, or rejects with the errors.
  if (result instanceof Promise) return result.then(() => jsonOutcome(path, value, null), failed);
  return jsonOutcome(path, value, result ? null : compiled.validate.errors);
}

function jsonOutcome(path: string, value: unknown, errors: ErrorObject[] | null | undefined): ArgsValidation {
  if (!errors || errors.length === 0) return { ok: true, value };
  const issues = resolveAlternatives(errors.filter((error) => error.keyword !== "if").map((error) => toIssue(error, value)));
  return { ok: false, message: invalidArgumentsMessage(path, issues.map(issueText)) };
}

function acceptsObject(schema: JsonSchema): boolean {
  return schema.type === "object" || (Array.isArray(schema.type) && schema.type.includes("object"));
}

// ——— Turning ajv errors into sentences a model can act on ———

/** One problem at one place in the arguments. */
interface Issue {
  path: PropertyKey[];
  schemaPath: string;
  keyword: string;
  /** What would have been accepted, when it can be merged with alternatives ("string", `"open"`). */
  expected?: string[];
  got?: string;
  /** The sentence, when the problem is not a plain expectation. */
  text?: string;
}

function issueText(issue: Issue): string {
  const where = formatPath(issue.path);
  if (issue.text !== undefined) return `${where}: ${issue.text}`;
  const expected = issue.expected ?? [];
  const choice = expected.length <= 1 ? (expected[0] ?? "another value") : `${expected.slice(0, -1).join(", ")} or ${expected.at(-1)}`;
  return `${where}: expected ${choice}${issue.got === undefined ? "" : `, got ${issue.got}`}`;
}

function toIssue(error: ErrorObject, args: unknown): Issue {
  const path = pointerToPath(error.instancePath, args);
  const base = { path, schemaPath: error.schemaPath, keyword: error.keyword };
  const params = error.params as Record<string, unknown>;
  const data: unknown = error.data;
  switch (error.keyword) {
    case "type": {
      const types = Array.isArray(params.type) ? params.type.map(String) : String(params.type).split(",");
      return { ...base, expected: types.map(typeLabel), got: describeKind(data) };
    }
    case "enum":
      return { ...base, expected: (Array.isArray(params.allowedValues) ? params.allowedValues : []).map(describeLiteral), got: describeLiteral(data) };
    case "const":
      return { ...base, expected: [describeLiteral(params.allowedValue)], got: describeLiteral(data) };
    case "required":
      return { ...base, path: [...path, String(params.missingProperty)], text: "missing required property" };
    case "dependentRequired":
    case "dependencies":
      return { ...base, path: [...path, String(params.missingProperty)], text: `required when ${JSON.stringify(params.property)} is given` };
    case "additionalProperties":
    case "unevaluatedProperties": {
      const property = String(params.additionalProperty ?? params.unevaluatedProperty);
      return { ...base, path: [...path, property], text: `property not allowed${allowedPropertiesHint(property, error.parentSchema)}` };
    }
    case "minimum":
    case "maximum":
    case "exclusiveMinimum":
    case "exclusiveMaximum":
      return { ...base, expected: [`a number ${String(params.comparison)} ${String(params.limit)}`], got: describeLiteral(data) };
    case "multipleOf":
      return { ...base, expected: [`a multiple of ${String(params.multipleOf)}`], got: describeLiteral(data) };
    case "minLength":
    case "maxLength":
      return { ...base, expected: [`${error.keyword === "minLength" ? "at least" : "at most"} ${count(params.limit, "character")}`], got: typeof data === "string" ? `${data.length}` : describeKind(data) };
    case "minItems":
    case "maxItems":
      return { ...base, expected: [`${error.keyword === "minItems" ? "at least" : "at most"} ${count(params.limit, "item")}`], got: Array.isArray(data) ? `${data.length}` : describeKind(data) };
    case "items":
    case "additionalItems":
      // A tuple (prefixItems / array-form items) that forbids more items than it lists.
      if (typeof params.limit === "number") return { ...base, expected: [`at most ${count(params.limit, "item")}`], got: Array.isArray(data) ? `${data.length}` : describeKind(data) };
      return { ...base, text: error.message ?? "has items that are not allowed" };
    case "minProperties":
    case "maxProperties":
      return { ...base, expected: [`${error.keyword === "minProperties" ? "at least" : "at most"} ${count(params.limit, "property", "properties")}`] };
    case "pattern":
      return { ...base, expected: [`a string matching /${String(params.pattern)}/`], got: describeLiteral(data) };
    case "format":
      return { ...base, expected: [`a string in format "${String(params.format)}"`], got: describeLiteral(data) };
    case "uniqueItems":
      return { ...base, text: `items ${String(params.j)} and ${String(params.i)} are duplicates; items must be unique` };
    case "contains":
      return { ...base, text: "no item matches the required item shape" };
    case "not":
      return { ...base, text: "matches a shape that is not allowed here" };
    case "false schema":
      return { ...base, text: "not allowed" };
    case "oneOf":
      if (Array.isArray(params.passingSchemas)) return { ...base, text: `matches more than one allowed shape (alternatives ${params.passingSchemas.join(" and ")}); it must match exactly one` };
      return { ...base, text: "does not match any allowed shape" };
    case "anyOf":
      return { ...base, text: "does not match any allowed shape" };
    default:
      return { ...base, text: error.message ?? `fails the "${error.keyword}" rule` };
  }
}

/**
 * With `allErrors`, ajv reports every failing branch of an `anyOf`/`oneOf`. A model needs one
 * story: "expected string or number" when every branch is a plain type or value mismatch at the
 * same place, otherwise the problems of the closest branch (fewest type/value mismatches, then
 * fewest problems — the branch whose discriminator matched).
 */
function resolveAlternatives(issues: Issue[]): Issue[] {
  const combinators = issues
    .filter((issue) => (issue.keyword === "anyOf" || issue.keyword === "oneOf") && issue.text === "does not match any allowed shape")
    .sort((a, b) => b.schemaPath.length - a.schemaPath.length);
  let remaining = issues;
  for (const combinator of combinators) {
    const prefix = `${combinator.schemaPath}/`;
    const branches = new Map<string, Issue[]>();
    for (const issue of remaining) {
      if (!issue.schemaPath.startsWith(prefix)) continue;
      const branch = issue.schemaPath.slice(prefix.length).split("/")[0] ?? "";
      branches.set(branch, [...(branches.get(branch) ?? []), issue]);
    }
    if (branches.size === 0) continue;
    const replacement = summarizeBranches(combinator, [...branches.values()]);
    remaining = remaining.filter((issue) => issue !== combinator && !issue.schemaPath.startsWith(prefix));
    remaining.push(...replacement.map((issue) => ({ ...issue, schemaPath: combinator.schemaPath })));
  }
  return remaining;
}

function summarizeBranches(combinator: Issue, branches: Issue[][]): Issue[] {
  const samePlace = (issue: Issue) => formatPath(issue.path) === formatPath(combinator.path);
  const plainMismatch = (issue: Issue) => issue.expected !== undefined && (issue.keyword === "type" || issue.keyword === "enum" || issue.keyword === "const");
  if (branches.every((branch) => branch.length === 1 && branch[0] !== undefined && samePlace(branch[0]) && plainMismatch(branch[0]))) {
    const expected = [...new Set(branches.flatMap((branch) => branch[0]?.expected ?? []))];
    return [{ ...combinator, keyword: "type", expected, got: branches[0]?.[0]?.got, text: undefined }];
  }
  const ranked = branches
    .map((branch, order) => ({ branch, order, mismatches: branch.filter(plainMismatch).length }))
    .sort((a, b) => a.mismatches - b.mismatches || a.branch.length - b.branch.length || a.order - b.order);
  return ranked[0]?.branch ?? [combinator];
}

function invalidArgumentsMessage(path: string, lines: string[]): string {
  const unique = [...new Set(lines)];
  const listed = unique.slice(0, MAX_LISTED_ISSUES).map((line) => `- ${line}`);
  if (unique.length > MAX_LISTED_ISSUES) listed.push(`- and ${unique.length - MAX_LISTED_ISSUES} more`);
  return `Invalid arguments for ${path}:\n${listed.join("\n")}`;
}

/** A JSON Pointer into the arguments as path segments; numbers where the container is an array. */
function pointerToPath(pointer: string, args: unknown): PropertyKey[] {
  if (pointer === "") return [];
  const path: PropertyKey[] = [];
  let current: unknown = args;
  for (const raw of pointer.slice(1).split("/")) {
    const key = raw.replaceAll("~1", "/").replaceAll("~0", "~");
    if (Array.isArray(current) && /^\d+$/.test(key)) {
      path.push(Number(key));
      current = current[Number(key)];
    } else {
      path.push(key);
      current = typeof current === "object" && current !== null ? (current as Record<string, unknown>)[key] : undefined;
    }
  }
  return path;
}

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

/** `args.items[2].quantity`, `args["content-type"]`: how the model's own code would reach the value. */
function formatPath(path: PropertyKey[]): string {
  let text = "args";
  for (const segment of path) {
    if (typeof segment === "number") text += `[${segment}]`;
    else if (typeof segment === "symbol") text += `[${segment.toString()}]`;
    else if (IDENTIFIER.test(segment)) text += `.${segment}`;
    else text += `[${JSON.stringify(segment)}]`;
  }
  return text;
}

function count(limit: unknown, singular: string, plural = `${singular}s`): string {
  return `${String(limit)} ${limit === 1 ? singular : plural}`;
}

function typeLabel(type: string): string {
  return type === "integer" ? "an integer" : type === "array" ? "an array" : type === "object" ? "an object" : type;
}

function describeKind(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "number") return `number ${value}`;
  if (typeof value === "string") return `string ${describeLiteral(value)}`;
  if (typeof value === "object") return "an object";
  return typeof value;
}

function describeLiteral(value: unknown): string {
  if (value === undefined) return "undefined";
  if (typeof value === "object" && value !== null) return Array.isArray(value) ? "an array" : "an object";
  const text = typeof value === "bigint" ? `${value}n` : JSON.stringify(value);
  return text.length > 60 ? `${text.slice(0, 57)}…` : text;
}

/** " (allowed: a, b; did you mean "b"?)" for an unexpected property, when the schema lists them. */
function allowedPropertiesHint(property: string, parentSchema: unknown): string {
  const properties = (parentSchema as { properties?: unknown } | undefined)?.properties;
  if (typeof properties !== "object" || properties === null) return "";
  const allowed = Object.keys(properties);
  if (allowed.length === 0) return "";
  const closest = allowed
    .map((name) => ({ name, distance: editDistance(property.toLowerCase(), name.toLowerCase()) }))
    .filter((candidate) => candidate.distance <= Math.max(1, Math.floor(property.length / 3)))
    .sort((a, b) => a.distance - b.distance)[0];
  const list = allowed.length <= 12 ? `allowed: ${allowed.join(", ")}` : `${allowed.length} properties allowed`;
  return ` (${closest ? `did you mean "${closest.name}"? ` : ""}${list})`;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}
