import type { JsonSchema } from "../connectors/define-connector.js";
import { isObject, type OpenApiDocument, OpenApiDocumentError, resolvePointer } from "./read-document.js";

/** Which way a schema describes data: what the program sends, or what the API answers. */
export type Direction = "input" | "output";

const COMPONENT_SCHEMA = /^#\/components\/schemas\/([^/]+)$/;
const DIALECT = "https://json-schema.org/draft/2020-12/schema";
/** Schemas nested deeper than this are refused: real documents stay far below, and the converter recurses. */
const MAX_DEPTH = 200;

/** Keywords whose value is one schema. */
const ONE_SCHEMA = new Set([
  "items",
  "additionalProperties",
  "not",
  "if",
  "then",
  "else",
  "contains",
  "propertyNames",
  "unevaluatedProperties",
  "unevaluatedItems",
  "additionalItems",
]);
/** Keywords whose value is a list of schemas. */
const SCHEMA_LIST = new Set(["allOf", "anyOf", "oneOf", "prefixItems"]);
/** Keywords whose value maps names to schemas. */
const SCHEMA_MAP = new Set(["properties", "patternProperties", "dependentSchemas", "$defs", "definitions"]);
/** Keywords that only annotate: beside a reference they can stay on it. */
const ANNOTATIONS = new Set(["description", "title", "readOnly", "writeOnly", "deprecated", "default", "examples"]);
/** OpenAPI's own keywords, which say nothing a JSON Schema validator or the generated types use. */
const DROPPED = new Set(["nullable", "example", "xml", "externalDocs", "discriminator"]);

/**
 * The schemas of one operation in one direction, as JSON Schema 2020-12: the document's
 * component schemas become `$defs` that the converted schemas `$ref`, so a recursive schema
 * (a task with subtasks) stays finite, and its name becomes the name of the generated type.
 * 3.0's rules are rewritten: `nullable: true` admits null, a boolean `exclusiveMinimum` moves
 * onto its bound. Properties marked `readOnly` are not required of input, `writeOnly` ones not of
 * output.
 */
export class SchemaSession {
  private readonly defs = new Map<string, JsonSchema | boolean>();
  /** Component names and the `$defs` key each got (a name that is not a plain key is rewritten). */
  private readonly keys = new Map<string, string>();
  /** References being inlined, to stop a reference that leads back into itself. */
  private readonly inlining = new Set<string>();
  /** How deep the schema being converted is nested now. */
  private depth = 0;

  constructor(
    private readonly document: OpenApiDocument,
    private readonly version: "3.0" | "3.1",
    private readonly direction: Direction,
    private readonly label: string,
  ) {}

  /** One schema of the operation, converted; its component schemas go into this session's `$defs`. */
  convert(schema: unknown): JsonSchema | boolean {
    if (typeof schema === "boolean") return schema;
    if (!isObject(schema)) return {};
    if (this.depth >= MAX_DEPTH)
      throw new OpenApiDocumentError(`${this.label}: a schema is nested more than ${MAX_DEPTH} levels deep`);
    this.depth++;
    try {
      return this.convertObject(schema);
    } finally {
      this.depth--;
    }
  }

  private convertObject(schema: { [key: string]: unknown }): JsonSchema | boolean {
    if (typeof schema.$ref === "string") return this.reference(schema);
    const out: JsonSchema = {};
    for (const [key, value] of Object.entries(schema)) {
      if (DROPPED.has(key) || key.startsWith("x-")) continue;
      if (ONE_SCHEMA.has(key) && (isObject(value) || typeof value === "boolean")) out[key] = this.convert(value);
      else if (SCHEMA_LIST.has(key) && Array.isArray(value)) out[key] = value.map((item) => this.convert(item));
      else if (SCHEMA_MAP.has(key) && isObject(value))
        out[key === "definitions" ? "$defs" : key] = Object.fromEntries(
          Object.entries(value).map(([name, item]) => [name, this.convert(item)]),
        );
      else out[key] = value;
    }
    this.dropHiddenRequired(out);
    return this.version === "3.0" ? rewrite30(schema, out) : out;
  }

  /** A root schema for a tool: the converted schema with the `$defs` it reaches and its dialect. */
  root(schema: JsonSchema): JsonSchema {
    return this.defs.size === 0
      ? { $schema: DIALECT, ...schema }
      : { $schema: DIALECT, ...schema, $defs: Object.fromEntries(this.defs) };
  }

  private reference(schema: { [key: string]: unknown }): JsonSchema | boolean {
    const ref = schema.$ref as string;
    const { $ref: _ref, ...siblings } = schema;
    // 3.0 writes a nullable reference with `nullable` beside it: null, or what it references.
    if (this.version === "3.0" && siblings.nullable === true) {
      const { nullable: _nullable, ...rest } = siblings;
      return { anyOf: [this.reference({ $ref: ref, ...rest }), { type: "null" }] };
    }
    const component = COMPONENT_SCHEMA.exec(ref)?.[1];
    if (component !== undefined) {
      const key = this.defKey(decodeURIComponent(component).replaceAll("~1", "/").replaceAll("~0", "~"));
      if (!this.defs.has(key)) {
        // Set before converting, so a reference back to it (a recursive schema) finds it.
        this.defs.set(key, {});
        this.defs.set(key, this.convert(resolvePointer(this.document, ref, this.label)));
      }
      const reference = { $ref: `#/$defs/${key}` };
      // Keywords beside the reference (3.1 allows them: `readOnly`, a description, `nullable` in
      // 3.0 style) apply too, so they are kept beside it in an `allOf`.
      const rest = this.convert(siblings);
      if (typeof rest === "boolean" || Object.keys(rest).length === 0) return reference;
      if (Object.keys(rest).every((keyword) => ANNOTATIONS.has(keyword))) return { ...reference, ...rest };
      return { allOf: [reference], ...rest };
    }
    // Another place in the document (a property of a component, a path's schema): inlined.
    if (this.inlining.has(ref)) return {};
    this.inlining.add(ref);
    try {
      const target = this.convert(resolvePointer(this.document, ref, this.label));
      return typeof target === "boolean" ? target : { ...target, ...(this.convert(siblings) as JsonSchema) };
    } finally {
      this.inlining.delete(ref);
    }
  }

  /** A `$defs` key for a component name: itself when it is a plain key, else rewritten and kept unique. */
  private defKey(name: string): string {
    const known = this.keys.get(name);
    if (known !== undefined) return known;
    const base = name.replace(/[^\w.-]/g, "_") || "Schema";
    const taken = new Set(this.keys.values());
    let key = base;
    for (let n = 2; taken.has(key); n++) key = `${base}_${n}`;
    this.keys.set(name, key);
    return key;
  }

  /** Leaves out of `required` what this direction never carries: readOnly in input, writeOnly in output. */
  private dropHiddenRequired(out: JsonSchema): void {
    if (!Array.isArray(out.required) || !isObject(out.properties)) return;
    const hidden = this.direction === "input" ? "readOnly" : "writeOnly";
    const properties = out.properties;
    const kept = out.required.filter((name) => {
      const own = properties[String(name)];
      if (isObject(own) && own[hidden] === true) return false;
      const property = this.dereferenced(own);
      return !(isObject(property) && property[hidden] === true);
    });
    if (kept.length === out.required.length) return;
    if (kept.length === 0) delete out.required;
    else out.required = kept;
  }

  private dereferenced(schema: unknown): unknown {
    if (!isObject(schema) || typeof schema.$ref !== "string") return schema;
    const key = /^#\/\$defs\/(.+)$/.exec(schema.$ref)?.[1];
    return key === undefined ? schema : this.defs.get(key);
  }
}

/** 3.0's `nullable` and boolean exclusive bounds, written as 2020-12 says them. */
function rewrite30(source: { [key: string]: unknown }, out: JsonSchema): JsonSchema {
  if (source.nullable === true) {
    if (typeof out.type === "string") out.type = [out.type, "null"];
    else if (Array.isArray(out.type) && !out.type.includes("null")) out.type = [...out.type, "null"];
    if (Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...out.enum, null];
  }
  for (const [flag, bound] of [
    ["exclusiveMinimum", "minimum"],
    ["exclusiveMaximum", "maximum"],
  ] as const) {
    if (typeof source[flag] !== "boolean") continue;
    if (source[flag] === true && typeof source[bound] === "number") {
      out[flag] = source[bound];
      delete out[bound];
    } else delete out[flag];
  }
  // A nullable schema without a type (an `allOf` of a reference, as 3.0 writes a nullable
  // reference): null is one more alternative.
  if (source.nullable === true && out.type === undefined) return { anyOf: [out, { type: "null" }] };
  return out;
}
