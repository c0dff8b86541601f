import { parse as parseYaml } from "yaml";
import { errorMessage, isErrorNamed } from "../error-message.js";

/**
 * Raised when an OpenAPI document cannot become a connector: text that is neither JSON nor YAML,
 * a version other than 3.0 or 3.1, a `$ref` that leads nowhere or out of the document, no
 * operation left, or no server to send requests to.
 */
export class OpenApiDocumentError extends Error {
  override readonly name = "OpenApiDocumentError";

  /** True for an `OpenApiDocumentError` from any copy of this package. */
  static isInstance(error: unknown): error is OpenApiDocumentError {
    return isErrorNamed(error, "OpenApiDocumentError");
  }
}

/** A parsed OpenAPI 3.0 or 3.1 document, as plain JSON values. */
export type OpenApiDocument = { [key: string]: unknown };

/** What `openApiConnector` reads of a document besides its paths. */
export interface DocumentFacts {
  document: OpenApiDocument;
  /** 3.0 schemas are read with 3.0's rules (`nullable`, boolean `exclusiveMinimum`). */
  version: "3.0" | "3.1";
}

/** How many `$ref`s in a row are followed before a chain is taken for a loop. */
const MAX_REF_HOPS = 32;

/**
 * The document as an object: given as one, or as JSON or YAML text. YAML is read by `yaml`
 * (YAML 1.2, its core schema, aliases capped so that a small text cannot expand without bound).
 */
export function readDocument(spec: unknown, label: string): DocumentFacts {
  let document: unknown = spec;
  if (typeof spec === "string") {
    const text = spec.trim();
    try {
      document = text.startsWith("{") ? JSON.parse(text) : parseYaml(text, { maxAliasCount: 1_000 });
    } catch (error) {
      throw new OpenApiDocumentError(`${label}: the spec is neither JSON nor YAML (${errorMessage(error)})`);
    }
  }
  if (!isObject(document))
    throw new OpenApiDocumentError(`${label}: the spec must be an OpenAPI document (an object, JSON or YAML text)`);
  if (typeof document.swagger === "string")
    throw new OpenApiDocumentError(
      `${label}: this is a Swagger ${document.swagger} document; convert it to OpenAPI 3 first (swagger2openapi does)`,
    );
  const declared = document.openapi;
  const version = typeof declared === "string" ? /^3\.([01])\.\d+/.exec(declared)?.[1] : undefined;
  if (version === undefined)
    throw new OpenApiDocumentError(
      `${label}: the spec declares openapi ${JSON.stringify(declared)}; OpenAPI 3.0 and 3.1 documents are read`,
    );
  if (document.paths !== undefined && !isObject(document.paths))
    throw new OpenApiDocumentError(`${label}: the document's paths is not an object`);
  return { document, version: version === "0" ? "3.0" : "3.1" };
}

/**
 * What a local reference (`#/components/parameters/TaskId`) points at. References to other files
 * or URLs are refused: nothing is fetched to read a document.
 */
export function resolvePointer(document: OpenApiDocument, ref: string, label: string): unknown {
  if (!ref.startsWith("#"))
    throw new OpenApiDocumentError(
      `${label}: the $ref ${JSON.stringify(ref)} points outside the document; only local references are read`,
    );
  let node: unknown = document;
  const pointer = ref.slice(1);
  if (pointer === "") return node;
  for (const raw of pointer.slice(1).split("/")) {
    const key = decodeURIComponent(raw).replaceAll("~1", "/").replaceAll("~0", "~");
    if (!isObject(node) && !Array.isArray(node)) node = undefined;
    else node = Object.hasOwn(node, key) ? (node as Record<string, unknown>)[key] : undefined;
    if (node === undefined) throw new OpenApiDocumentError(`${label}: the $ref ${JSON.stringify(ref)} leads nowhere`);
  }
  return node;
}

/** A parameter, request body, response or path item: its `$ref`s followed to the object itself. */
export function dereference(document: OpenApiDocument, node: unknown, label: string): unknown {
  let current = node;
  for (let hops = 0; isObject(current) && typeof current.$ref === "string"; hops++) {
    if (hops === MAX_REF_HOPS)
      throw new OpenApiDocumentError(`${label}: the $ref ${JSON.stringify(current.$ref)} is part of a loop`);
    current = resolvePointer(document, current.$ref, label);
  }
  return current;
}

export function isObject(value: unknown): value is { [key: string]: unknown } {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
