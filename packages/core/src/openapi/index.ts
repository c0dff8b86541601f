/**
 * `@codemode/core/openapi`: the HTTP APIs people already have, from their OpenAPI documents
 * (R-CN-OA). One method per operation, typed from the document; reads run freely, everything else
 * pauses for approval unless told otherwise.
 */
import type { Connector, ToolCaller, ToolContext, ToolDefinition } from "../connectors/define-connector.js";
import { defineConnector } from "../connectors/define-connector.js";
import { type OpenApiOperation, operationView, type PlannedOperation, planOperations } from "./operations.js";
import { isObject, type OpenApiDocument, OpenApiDocumentError, readDocument } from "./read-document.js";
import { type HeaderValues, type RequestSettings, type SecurityScheme, sendRequest } from "./send-request.js";

export type { OpenApiDocument, OpenApiOperation };
export { OpenApiDocumentError };

export interface OpenApiConnectorOptions {
  /** The global the program sees: a JavaScript identifier. */
  name: string;
  /** An OpenAPI 3.0 or 3.1 document: an object, or its JSON or YAML text. Only local `$ref`s are read. */
  spec: unknown;
  /** Where requests go. Default: the document's first server (its variables at their defaults). */
  baseUrl?: string | URL;
  /**
   * Headers for every request, or a function of the operation that returns them (a token that is
   * refreshed). A header a security scheme names (`Authorization` for HTTP and OAuth schemes, an
   * API key's name) is a credential: it goes only to operations whose security lists that scheme;
   * an API key the document puts in the query or a cookie is sent there.
   */
  headers?:
    | HeaderValues
    | ((request: { operation: OpenApiOperation; context: ToolContext }) => HeaderValues | Promise<HeaderValues>);
  /** The `fetch` requests go through. Default: the global one. */
  fetch?: typeof globalThis.fetch;
  /** Which operations become methods: their `operationId`s or method names, or a function. Default: all. */
  operations?: readonly string[] | ((operation: OpenApiOperation) => boolean);
  /**
   * Which calls pause for approval. "unless-read-only" (default): all but GET, HEAD and OPTIONS;
   * "always"; "never"; or a function of the operation.
   */
  approval?: "unless-read-only" | "always" | "never" | ((operation: OpenApiOperation) => boolean);
  /**
   * Who calls each method (a tool's `callers`): "code" (programs), "model" (directly, as a tool of
   * its own), or both; a list for every operation or a function of the operation. Default ["code"].
   */
  callers?: readonly ToolCaller[] | ((operation: OpenApiOperation) => readonly ToolCaller[]);
  /**
   * Told to the model (the start on the connector's line, the whole in `codemode.describe`).
   * Default: the document's title.
   */
  instructions?: string;
  /** A response body over this many bytes is an error. Default 1,000,000. */
  maxResponseBytes?: number;
  /** A request that takes longer is an error; the pass's own deadline counts too. Default 30,000 ms. */
  timeoutMs?: number;
}

const DEFAULT_MAX_RESPONSE_BYTES = 1_000_000;
const DEFAULT_TIMEOUT_MS = 30_000;
const INSTRUCTIONS_CHARS = 200;

/**
 * A connector for an HTTP API described by an OpenAPI 3.0 or 3.1 document: each operation becomes
 * a method named from its `operationId`, taking one object (path, query and header parameters by
 * name, the request body as `body`), with `inputSchema` and `outputSchema` from the document, so
 * search, describe and the generated TypeScript work as for any connector, and results are
 * checked against the document before the program sees them. GET, HEAD and OPTIONS are read-only;
 * other methods pause for approval by default and send the call's idempotency key as
 * `Idempotency-Key`. Requests only ever go to `baseUrl` (or the document's server).
 *
 * @example
 * const tasks = openApiConnector({
 *   name: "tasks",
 *   spec: await readFile("openapi.yaml", "utf8"),
 *   baseUrl: "https://api.example.com/v1",
 *   headers: { Authorization: `Bearer ${process.env.TASKS_TOKEN}` },
 * });
 * const runtime = createCodemodeRuntime({ connectors: [tasks] });
 */
export function openApiConnector(options: OpenApiConnectorOptions): Connector {
  if (!isObject(options)) throw new TypeError("openApiConnector(options): options must be an object");
  const label = `openApiConnector("${String(options.name)}")`;
  checkOptions(options, label);
  const facts = readDocument(options.spec, label);
  const planned = chosen(planOperations(facts, label), options.operations, label);
  if (planned.length === 0) throw new OpenApiDocumentError(`${label}: the document has no operations to call`);
  const settings: RequestSettings = {
    baseUrl: baseUrlOf(options.baseUrl, facts.document, label),
    headers: options.headers ?? {},
    fetch: options.fetch ?? ((input, init) => globalThis.fetch(input, init)),
    maxResponseBytes: options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES,
    timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    schemes: securitySchemes(facts.document),
  };
  const tools: Record<string, ToolDefinition> = {};
  for (const operation of planned) {
    const tool = toolOf(operation, settings, options.approval);
    const callers = typeof options.callers === "function" ? options.callers(tool.view) : options.callers;
    tools[operation.name] = callers === undefined ? tool.definition : { ...tool.definition, callers };
  }
  const instructions = options.instructions ?? instructionsOf(facts.document);
  return defineConnector({ name: options.name, ...(instructions ? { instructions } : {}), tools });
}

function toolOf(
  operation: PlannedOperation,
  settings: RequestSettings,
  approval: OpenApiConnectorOptions["approval"],
): { view: OpenApiOperation; definition: ToolDefinition } {
  const view = operationView(operation);
  const pauses =
    typeof approval === "function"
      ? approval(view) !== false
      : approval === "always" || (approval !== "never" && !operation.readOnly);
  const definition: ToolDefinition = {
    description: operation.description,
    inputSchema: operation.inputSchema,
    ...(operation.outputSchema ? { outputSchema: operation.outputSchema } : {}),
    ...(operation.readOnly ? { readOnly: true } : {}),
    ...(pauses ? { requiresApproval: true } : {}),
    execute: (args: unknown, context: ToolContext) => sendRequest(operation, view, settings, args, context),
  };
  return { view, definition };
}

function checkOptions(options: OpenApiConnectorOptions, label: string): void {
  const problems: string[] = [];
  const { approval, operations, headers, maxResponseBytes, timeoutMs } = options;
  if (
    approval !== undefined &&
    typeof approval !== "function" &&
    approval !== "unless-read-only" &&
    approval !== "always" &&
    approval !== "never"
  )
    problems.push(`approval must be "unless-read-only", "always", "never" or a function`);
  if (options.callers !== undefined && typeof options.callers !== "function" && !Array.isArray(options.callers))
    problems.push('callers must be a list of "code" and/or "model", or a function of the operation');
  if (operations !== undefined && typeof operations !== "function" && !Array.isArray(operations))
    problems.push("operations must be a list of operationIds or method names, or a function");
  if (headers !== undefined && typeof headers !== "function" && !isObject(headers))
    problems.push("headers must be an object of header values or a function that returns one");
  if (options.fetch !== undefined && typeof options.fetch !== "function") problems.push("fetch must be a function");
  for (const [value, option] of [
    [maxResponseBytes, "maxResponseBytes"],
    [timeoutMs, "timeoutMs"],
  ] as const)
    if (value !== undefined && (typeof value !== "number" || !Number.isFinite(value) || value <= 0))
      problems.push(`${option} must be a positive number`);
  if (problems.length > 0) throw new TypeError(`${label}: ${problems.join("; ")}`);
}

function chosen(
  planned: PlannedOperation[],
  filter: OpenApiConnectorOptions["operations"],
  label: string,
): PlannedOperation[] {
  if (filter === undefined) return planned;
  if (typeof filter === "function") return planned.filter((operation) => filter(operationView(operation)));
  const wanted = new Set(filter);
  const unknown = [...wanted].filter(
    (name) => !planned.some((operation) => operation.name === name || operation.operationId === name),
  );
  if (unknown.length > 0)
    throw new OpenApiDocumentError(
      `${label}: the document has no operation ${unknown.map((name) => JSON.stringify(name)).join(", ")}`,
    );
  return planned.filter(
    (operation) =>
      wanted.has(operation.name) || (operation.operationId !== undefined && wanted.has(operation.operationId)),
  );
}

/** `baseUrl`, else the document's first server with its variables at their defaults; http or https only. */
function baseUrlOf(given: string | URL | undefined, document: OpenApiDocument, label: string): URL {
  let text: string | undefined = given === undefined ? undefined : String(given);
  if (text === undefined) {
    const server = Array.isArray(document.servers) ? document.servers.find(isObject) : undefined;
    if (server && typeof server.url === "string") {
      const variables = isObject(server.variables) ? server.variables : {};
      text = server.url.replace(/\{([^}]+)\}/g, (whole, name: string) => {
        const variable = variables[name];
        return isObject(variable) && typeof variable.default === "string" ? variable.default : whole;
      });
    }
  }
  if (text === undefined) throw new OpenApiDocumentError(`${label}: the document names no server; give baseUrl`);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new OpenApiDocumentError(
      `${label}: ${given === undefined ? "the document's server" : "baseUrl"} ${JSON.stringify(text)} is not an absolute URL; give baseUrl`,
    );
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new OpenApiDocumentError(`${label}: requests go over http or https, not ${url.protocol}`);
  return url;
}

/** Where each security scheme puts its credential: HTTP and OAuth schemes in `Authorization`. */
function securitySchemes(document: OpenApiDocument): Map<string, SecurityScheme> {
  const schemes = new Map<string, SecurityScheme>();
  const declared =
    isObject(document.components) && isObject(document.components.securitySchemes)
      ? document.components.securitySchemes
      : {};
  for (const [name, scheme] of Object.entries(declared)) {
    if (!isObject(scheme)) continue;
    if (
      scheme.type === "apiKey" &&
      typeof scheme.name === "string" &&
      (scheme.in === "header" || scheme.in === "query" || scheme.in === "cookie")
    )
      schemes.set(name, { in: scheme.in, name: scheme.name });
    else if (scheme.type === "http" || scheme.type === "oauth2" || scheme.type === "openIdConnect")
      schemes.set(name, { in: "header", name: "Authorization" });
  }
  return schemes;
}

function instructionsOf(document: OpenApiDocument): string | undefined {
  const info = isObject(document.info) ? document.info : {};
  const title = typeof info.title === "string" ? info.title.replace(/\s+/g, " ").trim() : "";
  if (title === "") return undefined;
  return title.length > INSTRUCTIONS_CHARS ? `${title.slice(0, INSTRUCTIONS_CHARS - 1)}…` : title;
}
