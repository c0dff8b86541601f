/**
 * A JSON Schema written as a TypeScript type expression: objects, arrays and tuples, unions,
 * literals, and `$ref`ed definitions as named types. Pure: the same schema always gives the same text.
 */

import {
  docComment,
  indentLines,
  isPlainObject,
  pascalCase,
  propertyKey,
  schemaDocumentation,
} from "./declaration-text.js";
import type { JsonSchema } from "./define-connector.js";
import {
  arrayOf,
  intersectionOf,
  KEYWORD_TYPES,
  literalType,
  NEVER,
  NULL,
  type TypeText,
  UNDEFINED,
  UNKNOWN,
  unionOf,
} from "./type-text.js";

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

const DEFAULT_MAX_DEPTH = 8;
/** Wider than this on one line, an object type is written one member per line. */
const ONE_LINE_WIDTH = 80;

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

function composedType(
  schema: Record<string, unknown>,
  conversion: Conversion,
  depth: number,
  qualify: boolean,
): TypeText {
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
    if (Array.isArray(branches))
      parts.push(unionOf(branches.map((branch) => schemaType(branch, conversion, depth, qualify))));
  }
  if (Array.isArray(schema.allOf))
    parts.push(...schema.allOf.map((part) => schemaType(part, conversion, depth, qualify)));
  const type = parts.length === 0 ? UNKNOWN : intersectionOf(parts);
  return schema.nullable === true ? unionOf([type, NULL]) : type;
}

/** The type from `type` (a name or a list of names), or inferred from object or array keywords. */
function declaredType(
  schema: Record<string, unknown>,
  conversion: Conversion,
  depth: number,
  qualify: boolean,
): TypeText | undefined {
  let typeNames: string[];
  if (typeof schema.type === "string") typeNames = [schema.type];
  else if (Array.isArray(schema.type))
    typeNames = schema.type.filter((name): name is string => typeof name === "string");
  else if (
    ["properties", "additionalProperties", "patternProperties", "required"].some((keyword) =>
      Object.hasOwn(schema, keyword),
    )
  )
    typeNames = ["object"];
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

function objectType(
  schema: Record<string, unknown>,
  conversion: Conversion,
  depth: number,
  qualify: boolean,
): TypeText {
  const properties = isPlainObject(schema.properties) ? schema.properties : {};
  const required = new Set(
    Array.isArray(schema.required) ? schema.required.filter((name) => typeof name === "string") : [],
  );
  const members: { documentation: string; text: string }[] = [];
  const memberTypes: TypeText[] = [];
  let anyOptional = false;
  for (const [name, propertySchema] of Object.entries(properties)) {
    const type = schemaType(propertySchema, conversion, depth + 1, qualify);
    const optional = !required.has(name);
    anyOptional ||= optional;
    memberTypes.push(type);
    members.push({
      documentation: docComment(schemaDocumentation(propertySchema)),
      text: `${propertyKey(name)}${optional ? "?" : ""}: ${type.text}`,
    });
  }
  for (const name of required) {
    if (Object.hasOwn(properties, name)) continue;
    memberTypes.push(UNKNOWN);
    members.push({ documentation: "", text: `${propertyKey(name)}: unknown` });
  }
  const indexTypes: TypeText[] = [];
  const additional = schema.additionalProperties;
  if (additional === true || isPlainObject(additional))
    indexTypes.push(schemaType(additional, conversion, depth + 1, qualify));
  if (isPlainObject(schema.patternProperties)) {
    for (const patternSchema of Object.values(schema.patternProperties))
      indexTypes.push(schemaType(patternSchema, conversion, depth + 1, qualify));
  }
  if (indexTypes.length > 0) {
    // TypeScript requires every named property to fit the index signature.
    const fitting = [...indexTypes, ...memberTypes, ...(anyOptional ? [UNDEFINED] : [])];
    members.push({ documentation: "", text: `[key: string]: ${unionOf(fitting).text}` });
  } else if (members.length === 0) {
    members.push({ documentation: "", text: `[key: string]: ${additional === false ? "never" : "unknown"}` });
  }
  const oneLine = `{ ${members.map((member) => member.text).join("; ")} }`;
  if (
    members.every((member) => member.documentation === "") &&
    !oneLine.includes("\n") &&
    oneLine.length <= ONE_LINE_WIDTH
  ) {
    return { text: oneLine, precedence: "primary" };
  }
  const lines = members.map((member) => indentLines(`${member.documentation}${member.text};`));
  return { text: `{\n${lines.join("\n")}\n}`, precedence: "primary" };
}

function arrayType(schema: Record<string, unknown>, conversion: Conversion, depth: number, qualify: boolean): TypeText {
  // Tuples: `prefixItems` + `items` for the rest (2020-12), or an `items` array + `additionalItems` (draft 07).
  const prefix = Array.isArray(schema.prefixItems)
    ? schema.prefixItems
    : Array.isArray(schema.items)
      ? schema.items
      : undefined;
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
    if (!closed)
      elements.push(
        `...${arrayOf(rest === undefined ? UNKNOWN : schemaType(rest, conversion, depth + 1, qualify)).text}`,
      );
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

function qualifiedName(name: string, conversion: Conversion): string {
  return conversion.typeNamespace === undefined ? name : `${conversion.typeNamespace}.${name}`;
}

function replaceContents<Key, Value>(target: Map<Key, Value>, source: ReadonlyMap<Key, Value>): void {
  target.clear();
  for (const [key, value] of source) target.set(key, value);
}
