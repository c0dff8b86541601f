import type { JsonSchema } from "../connectors/define-connector.js";
import { methodNamesFor } from "../connectors/method-names.js";
import { type DocumentFacts, dereference, isObject } from "./read-document.js";
import { SchemaSession } from "./schema-conversion.js";

/** One operation of the document, as `approval`, `operations` and `headers` functions see it. */
export interface OpenApiOperation {
  /** The method name the program calls (`tasks.listTasks`). */
  name: string;
  operationId?: string;
  /** Upper case: "GET", "POST"… */
  method: string;
  /** The path template, as the document writes it: "/tasks/{taskId}". */
  path: string;
  summary?: string;
  tags: string[];
  /** GET, HEAD and OPTIONS. */
  readOnly: boolean;
  /** The security schemes the operation accepts: alternatives, each a list of scheme names. */
  security: string[][];
}

/** What `approval`, `operations`, `callers` and `headers` functions are shown of a planned operation. */
export function operationView(operation: PlannedOperation): OpenApiOperation {
  const { description: _d, parameters: _p, body: _b, inputSchema: _i, outputSchema: _o, ...view } = operation;
  return view;
}

/** Where an argument of the generated method goes in the request. */
export interface RequestParameter {
  /** The parameter's name in the request. */
  name: string;
  in: "path" | "query" | "header" | "cookie";
  /** Its property in the method's one argument. */
  property: string;
  /**
   * How a query value that is an array or an object is written (OpenAPI's `style` and `explode`):
   * "form" (`?tag=a&tag=b`, or `tag=a,b` without explode; an object's properties as their own
   * parameters, or `name=k,v,…`), "spaceDelimited", "pipeDelimited", or "deepObject"
   * (`filter[status]=open`).
   */
  style: "form" | "spaceDelimited" | "pipeDelimited" | "deepObject";
  /** Arrays repeated and objects spread (the default for form), or joined. */
  explode: boolean;
}

/** An operation with everything its tool needs. */
export interface PlannedOperation extends OpenApiOperation {
  description: string;
  parameters: RequestParameter[];
  body?: { property: string; mediaType: string };
  inputSchema: JsonSchema;
  outputSchema?: JsonSchema;
}

const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"] as const;
const READ_ONLY = new Set(["GET", "HEAD", "OPTIONS"]);
/** Headers the connector itself sets: a parameter of these names is not the program's to send. */
const MANAGED_HEADERS = new Set(["accept", "content-type", "authorization", "idempotency-key", "content-length"]);
/** A tool's description (summary, description, method and path) is cut here: search and describe show it. */
const DESCRIPTION_CHARS = 600;

/**
 * Every operation of the document, in its order, with a method name (its `operationId` as an
 * identifier, else made of the method and path), one argument object (path, query and header
 * parameters by name, the request body as `body`) and its schemas.
 */
export function planOperations(facts: DocumentFacts, label: string): PlannedOperation[] {
  const { document } = facts;
  const found: Array<Omit<PlannedOperation, "name"> & { wanted: string }> = [];
  const paths = isObject(document.paths) ? document.paths : {};
  const globalSecurity = securityOf(document.security) ?? [];
  for (const [path, rawItem] of Object.entries(paths)) {
    const item = dereference(document, rawItem, label);
    if (!isObject(item)) continue;
    for (const method of METHODS) {
      const operation = item[method];
      if (!isObject(operation)) continue;
      const where = `${label}: ${method.toUpperCase()} ${path}`;
      const upper = method.toUpperCase();
      const operationId = typeof operation.operationId === "string" ? operation.operationId : undefined;
      const input = new SchemaSession(document, facts.version, "input", where);
      const request = requestOf(facts, item.parameters, operation, input, where);
      const summary = typeof operation.summary === "string" ? operation.summary : undefined;
      // A HEAD answer has no body whatever its response says: nothing to check.
      const outputSchema =
        upper === "HEAD"
          ? undefined
          : successSchema(
              facts,
              operation.responses,
              new SchemaSession(document, facts.version, "output", where),
              where,
            );
      found.push({
        wanted: operationId ?? `${method}_${path.replace(/[{}]/g, "").replace(/^\/+/, "")}`,
        ...(operationId !== undefined ? { operationId } : {}),
        method: upper,
        path,
        ...(summary !== undefined ? { summary } : {}),
        tags: Array.isArray(operation.tags) ? operation.tags.filter((tag) => typeof tag === "string") : [],
        readOnly: READ_ONLY.has(upper),
        security: securityOf(operation.security) ?? globalSecurity,
        description: describe(upper, path, summary, operation.description),
        ...request,
        ...(outputSchema !== undefined ? { outputSchema } : {}),
      });
    }
  }
  const names = uniqueNames(found.map(({ wanted }) => wanted));
  return found.map(({ wanted: _wanted, ...operation }, index) => ({ name: names[index]!, ...operation }));
}

/**
 * A method name per operation, in the document's order: the wanted name as an identifier, and,
 * when two operations would get the same one (an `operationId` written twice, `/users/{id}` and
 * `/users/id`), the later ones numbered (`_2`, `_3`), so that no operation replaces another.
 */
function uniqueNames(wanted: readonly string[]): string[] {
  const taken = new Set<string>();
  return wanted.map((name) => {
    const base = methodNamesFor([name]).get(name)!;
    let candidate = base;
    for (let n = 2; taken.has(candidate); n++) candidate = `${base}_${n}`;
    taken.add(candidate);
    return candidate;
  });
}

function describe(method: string, path: string, summary: string | undefined, description: unknown): string {
  const parts = [`${method} ${path}`];
  if (summary) parts.push(summary);
  if (typeof description === "string" && description.trim() !== "" && description.trim() !== summary?.trim())
    parts.push(description.trim());
  const text = parts.join(": ").replace(/\s+/g, " ");
  return text.length > DESCRIPTION_CHARS ? `${text.slice(0, DESCRIPTION_CHARS - 1)}…` : text;
}

/** The method's argument: parameters (the operation's over its path's, by name and place) and the body. */
function requestOf(
  facts: DocumentFacts,
  pathParameters: unknown,
  operation: { [key: string]: unknown },
  session: SchemaSession,
  where: string,
): Pick<PlannedOperation, "parameters" | "body" | "inputSchema"> {
  const byPlace = new Map<string, { [key: string]: unknown }>();
  for (const list of [pathParameters, operation.parameters]) {
    if (!Array.isArray(list)) continue;
    for (const raw of list) {
      const parameter = dereference(facts.document, raw, where);
      if (!isObject(parameter) || typeof parameter.name !== "string") continue;
      if (parameter.in === "header" && MANAGED_HEADERS.has(parameter.name.toLowerCase())) continue;
      byPlace.set(`${String(parameter.in)}:${parameter.name}`, parameter);
    }
  }
  const properties: Record<string, JsonSchema | boolean> = {};
  const required: string[] = [];
  const parameters: RequestParameter[] = [];
  const taken = (name: string) => Object.hasOwn(properties, name);
  for (const parameter of byPlace.values()) {
    const place = parameter.in;
    if (place !== "path" && place !== "query" && place !== "header" && place !== "cookie") continue;
    const name = parameter.name as string;
    const property = taken(name) ? `${place}_${name}` : name;
    const schema = session.convert(parameterSchema(parameter));
    properties[property] =
      typeof parameter.description === "string" && typeof schema === "object"
        ? { ...schema, description: parameter.description }
        : schema;
    if (parameter.required === true || place === "path") required.push(property);
    const style =
      parameter.style === "spaceDelimited" || parameter.style === "pipeDelimited" || parameter.style === "deepObject"
        ? parameter.style
        : "form";
    // OpenAPI's default: explode for form, not for the others.
    const explode = typeof parameter.explode === "boolean" ? parameter.explode : style === "form";
    parameters.push({ name, in: place, property, style, explode });
  }
  const body = bodyOf(facts, operation.requestBody, where);
  let bodyProperty: { property: string; mediaType: string } | undefined;
  if (body) {
    let property = "body";
    for (let n = 2; taken(property); n++) property = n === 2 && !taken("requestBody") ? "requestBody" : `body_${n}`;
    properties[property] = session.convert(body.schema);
    if (body.required) required.push(property);
    bodyProperty = { property, mediaType: body.mediaType };
  }
  const inputSchema = session.root({
    type: "object",
    properties,
    ...(required.length > 0 ? { required } : {}),
    additionalProperties: false,
  });
  return { parameters, ...(bodyProperty ? { body: bodyProperty } : {}), inputSchema };
}

function parameterSchema(parameter: { [key: string]: unknown }): unknown {
  if (parameter.schema !== undefined) return parameter.schema;
  // A parameter may give its schema under `content` instead (one media type).
  if (isObject(parameter.content)) {
    const first = Object.values(parameter.content)[0];
    if (isObject(first)) return first.schema;
  }
  return {};
}

/** The media types a body is sent as, best first: JSON, then a form, then text. */
function pickMediaType(content: { [key: string]: unknown }): string | undefined {
  const types = Object.keys(content);
  return (
    types.find((type) => /^application\/json\b/i.test(type)) ??
    types.find((type) => /\+json\b/i.test(type)) ??
    types.find((type) => /^application\/x-www-form-urlencoded\b/i.test(type)) ??
    types.find((type) => /^text\//i.test(type)) ??
    types[0]
  );
}

function bodyOf(
  facts: DocumentFacts,
  raw: unknown,
  where: string,
): { schema: unknown; mediaType: string; required: boolean } | undefined {
  const body = dereference(facts.document, raw, where);
  if (!isObject(body) || !isObject(body.content)) return undefined;
  const mediaType = pickMediaType(body.content);
  if (mediaType === undefined) return undefined;
  const media = body.content[mediaType];
  const known = /json\b|x-www-form-urlencoded/i.test(mediaType);
  const schema = isObject(media) && media.schema !== undefined ? media.schema : known ? {} : { type: "string" };
  return { schema: known ? schema : { type: "string" }, mediaType, required: body.required === true };
}

/**
 * What a successful call answers: the JSON schema of its 2xx responses (several become `anyOf`).
 * None when no 2xx response has JSON content (204, a file download): then nothing is checked;
 * when some have and some have not, null (what a bodiless answer gives) is one more alternative.
 */
function successSchema(
  facts: DocumentFacts,
  rawResponses: unknown,
  session: SchemaSession,
  where: string,
): JsonSchema | undefined {
  if (!isObject(rawResponses)) return undefined;
  const schemas: Array<JsonSchema | boolean> = [];
  let bodiless = false;
  for (const [status, raw] of Object.entries(rawResponses)) {
    if (!/^2(\d\d|XX)$/i.test(status)) continue;
    const response = dereference(facts.document, raw, where);
    const content = isObject(response) && isObject(response.content) ? response.content : {};
    const mediaType = Object.keys(content).find((type) => /json\b/i.test(type));
    const media = mediaType === undefined ? undefined : content[mediaType];
    if (isObject(media) && media.schema !== undefined) schemas.push(session.convert(media.schema));
    // A success without a JSON body (204 No Content) answers null, which must pass too.
    else bodiless = true;
  }
  if (schemas.length === 0) return undefined;
  if (bodiless) schemas.push({ type: "null" });
  const distinct = [...new Map(schemas.map((schema) => [JSON.stringify(schema), schema])).values()];
  const only = distinct.length === 1 ? distinct[0]! : { anyOf: distinct };
  return session.root(typeof only === "boolean" ? (only ? {} : { not: {} }) : only);
}

function securityOf(value: unknown): string[][] | undefined {
  if (!Array.isArray(value)) return undefined;
  return value.filter(isObject).map((requirement) => Object.keys(requirement));
}
