import type { ToolContext } from "../connectors/define-connector.js";
import type { OpenApiOperation, PlannedOperation, RequestParameter } from "./operations.js";

/** Header values for a request, by header name. */
export type HeaderValues = Record<string, string>;

/** How the connector's requests are sent: where, with what, and within what bounds. */
export interface RequestSettings {
  /** Every request goes to this origin, under this path. */
  baseUrl: URL;
  headers:
    | HeaderValues
    | ((request: { operation: OpenApiOperation; context: ToolContext }) => HeaderValues | Promise<HeaderValues>);
  fetch: typeof globalThis.fetch;
  maxResponseBytes: number;
  timeoutMs: number;
  /** The document's security schemes, by name. */
  schemes: ReadonlyMap<string, SecurityScheme>;
}

/** Where a security scheme puts its credential. */
export type SecurityScheme = { in: "header" | "query" | "cookie"; name: string };

/** Characters of an error response's body kept in the error's message. */
const ERROR_BODY_CHARS = 1_000;

/**
 * Sends one call of an operation: the request is built from the document (the program picks
 * values, never a URL: path values are encoded, the origin is the connector's), credentials go to
 * operations whose security asks for them, a call that changes things carries its idempotency key,
 * and the response is read within `maxResponseBytes` and the pass's time. A status of 300 or more
 * is an error with the status and the start of the body; redirects are not followed.
 */
export async function sendRequest(
  operation: PlannedOperation,
  view: OpenApiOperation,
  settings: RequestSettings,
  args: unknown,
  context: ToolContext,
): Promise<unknown> {
  const label = `${context.connector}.${context.method}`;
  const values = (typeof args === "object" && args !== null ? args : {}) as Record<string, unknown>;
  let url: URL;
  try {
    url = requestUrl(operation, settings.baseUrl, values);
  } catch (error) {
    throw new Error(`${label}: ${(error as Error).message}`);
  }
  const headers = new Headers({ accept: "application/json, text/plain;q=0.9, */*;q=0.5" });
  const cookies: string[] = [];
  for (const parameter of operation.parameters) {
    const value = values[parameter.property];
    if (value === undefined || parameter.in === "path") continue;
    if (parameter.in === "query") appendQuery(url, parameter, value);
    else if (parameter.in === "header") headers.set(parameter.name, text(value));
    else cookies.push(`${encodeURIComponent(parameter.name)}=${encodeURIComponent(text(value))}`);
  }
  // The time limit counts from here: a headers function that refreshes a token is part of the call.
  const signal = requestSignal(settings.timeoutMs, context);
  const given =
    typeof settings.headers === "function"
      ? await beforeAbort(
          Promise.resolve(settings.headers({ operation: view, context })),
          signal,
          () => new Error(`${label}: the headers function ${abortReason(context)}`),
        )
      : settings.headers;
  applyCredentials(operation, settings.schemes, given, headers, url, cookies);
  if (cookies.length > 0) headers.set("cookie", cookies.join("; "));
  if (!operation.readOnly && !headers.has("idempotency-key")) headers.set("idempotency-key", context.idempotencyKey);
  let body: string | undefined;
  if (operation.body && values[operation.body.property] !== undefined) {
    body = encodeBody(operation.body.mediaType, values[operation.body.property]);
    headers.set("content-type", operation.body.mediaType);
  }
  if (url.origin !== settings.baseUrl.origin) throw new Error(`${label}: refused a request to ${url.origin}`);

  let response: Response;
  try {
    response = await settings.fetch(url, {
      method: operation.method,
      headers,
      ...(body !== undefined ? { body } : {}),
      signal,
      redirect: "manual",
    });
  } catch (error) {
    if (signal.aborted) throw new Error(`${label}: ${operation.method} ${url.pathname} ${abortReason(context)}`);
    throw new Error(
      `${label}: ${operation.method} ${url.pathname} failed: ${(error as Error).message ?? String(error)}`,
    );
  }
  const received = await readBounded(response, settings.maxResponseBytes, label, signal, context);
  if (response.status >= 300) {
    const location = response.headers.get("location");
    const shown = received.length > ERROR_BODY_CHARS ? `${received.slice(0, ERROR_BODY_CHARS)}…` : received;
    const redirect = response.status < 400 && location ? ` (a redirect to ${location}, not followed)` : "";
    throw new Error(
      `${label}: HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ""}${redirect}${shown.trim() ? `: ${shown.trim()}` : ""}`,
    );
  }
  if (received === "" || operation.method === "HEAD") return null;
  const type = response.headers.get("content-type") ?? "";
  if (!/json\b/i.test(type)) return received;
  try {
    return JSON.parse(received) as unknown;
  } catch {
    throw new Error(`${label}: the response says ${type} but its body is not JSON`);
  }
}

/** The base URL's path, then the operation's, with each path value encoded as one segment. */
function requestUrl(operation: PlannedOperation, base: URL, values: Record<string, unknown>): URL {
  const byName = new Map(operation.parameters.filter((p) => p.in === "path").map((p) => [p.name, p.property]));
  const path = operation.path.replace(/\{([^}]+)\}/g, (_whole, name: string) => {
    const property = byName.get(name);
    return segment(property === undefined ? "" : text(values[property]), name);
  });
  const url = new URL(base.href);
  url.pathname = `${base.pathname.replace(/\/+$/, "")}${path.startsWith("/") ? path : `/${path}`}`;
  // The base URL's own query (an `api-version`) goes with every request; the operation's follows it.
  url.hash = "";
  return url;
}

/**
 * One path segment, every reserved character encoded. An empty value is refused (`/items/` is
 * another route than `/items/{id}`), and so is `.` or `..` anywhere between slashes: a URL reads
 * them as steps up the path, and a server that decodes `%2F` before routing would too.
 */
function segment(value: string, name: string): string {
  if (value === "") throw new Error(`the path parameter ${name} cannot be empty`);
  if (value.split(/[/\\]/).some((piece) => piece === "." || piece === ".."))
    throw new Error(`the path parameter ${name} cannot step up the path (${JSON.stringify(value)})`);
  return encodeURIComponent(value);
}

/** A query value, written as its parameter's `style` and `explode` say (OpenAPI 3 serialization). */
function appendQuery(url: URL, parameter: RequestParameter, value: unknown): void {
  const { name, style, explode } = parameter;
  const add = (key: string, item: unknown) => url.searchParams.append(key, text(item));
  if (Array.isArray(value)) {
    if (explode) for (const item of value) add(name, item);
    else add(name, value.map(text).join(style === "spaceDelimited" ? " " : style === "pipeDelimited" ? "|" : ","));
  } else if (typeof value === "object" && value !== null) {
    const entries = Object.entries(value).filter(([, item]) => item !== undefined);
    if (style === "deepObject") for (const [key, item] of entries) add(`${name}[${key}]`, item);
    else if (explode) for (const [key, item] of entries) add(key, item);
    else add(name, entries.flatMap(([key, item]) => [key, text(item)]).join(","));
  } else add(name, value);
}

function text(value: unknown): string {
  if (typeof value === "string") return value;
  if (value === undefined) return "";
  return typeof value === "object" ? JSON.stringify(value) : String(value);
}

function encodeBody(mediaType: string, value: unknown): string {
  if (/x-www-form-urlencoded/i.test(mediaType) && typeof value === "object" && value !== null) {
    const form = new URLSearchParams();
    for (const [key, item] of Object.entries(value)) if (item !== undefined) form.append(key, text(item));
    return form.toString();
  }
  if (/json\b/i.test(mediaType)) return JSON.stringify(value);
  return text(value);
}

/**
 * The application's headers: a credential (the header, query parameter or cookie a security
 * scheme names) goes only to operations whose security lists that scheme; every other header goes
 * to every request.
 */
function applyCredentials(
  operation: PlannedOperation,
  schemes: ReadonlyMap<string, SecurityScheme>,
  given: HeaderValues,
  headers: Headers,
  url: URL,
  cookies: string[],
): void {
  const accepted = new Set(operation.security.flat());
  // A credential's name (lower case) and the schemes that use it: several may share Authorization.
  const credentials = new Map<string, Array<{ scheme: string; place: SecurityScheme }>>();
  for (const [scheme, place] of schemes) {
    const key = place.name.toLowerCase();
    credentials.set(key, [...(credentials.get(key) ?? []), { scheme, place }]);
  }
  for (const [name, value] of Object.entries(given ?? {})) {
    if (typeof value !== "string") continue;
    const users = credentials.get(name.toLowerCase());
    if (!users) {
      headers.set(name, value);
      continue;
    }
    const place = users.find(({ scheme }) => accepted.has(scheme))?.place;
    if (!place) continue;
    if (place.in === "header") headers.set(name, value);
    else if (place.in === "query") url.searchParams.set(place.name, value);
    else cookies.push(`${encodeURIComponent(place.name)}=${encodeURIComponent(value)}`);
  }
}

/** Aborted by a cancel of the run, the pass's deadline or the connector's own time limit, whichever comes first. */
function requestSignal(timeoutMs: number, context: ToolContext): AbortSignal {
  const left = context.deadline === undefined ? timeoutMs : Math.min(timeoutMs, context.deadline - Date.now());
  const signals = [AbortSignal.timeout(Math.max(0, left))];
  if (context.signal) signals.push(context.signal);
  return AbortSignal.any(signals);
}

/** `work`, unless `signal` aborts first: then the error `aborted` makes. */
function beforeAbort<T>(work: Promise<T>, signal: AbortSignal, aborted: () => Error): Promise<T> {
  if (signal.aborted) return Promise.reject(aborted());
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(aborted());
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

function abortReason(context: ToolContext): string {
  if (context.signal?.aborted) return "was stopped: the run was cancelled";
  return "ran out of time";
}

/** The body as text, read no further than `limit` bytes. */
async function readBounded(
  response: Response,
  limit: number,
  label: string,
  signal: AbortSignal,
  context: ToolContext,
): Promise<string> {
  const declared = Number(response.headers.get("content-length"));
  const over = () => new Error(`${label}: the response is over ${limit.toLocaleString("en")} bytes (maxResponseBytes)`);
  if (Number.isFinite(declared) && declared > limit) {
    await response.body?.cancel().catch(() => undefined);
    throw over();
  }
  if (!response.body) return "";
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > limit) {
        await reader.cancel().catch(() => undefined);
        throw over();
      }
      chunks.push(value);
    }
  } catch (error) {
    if (signal.aborted) throw new Error(`${label}: reading the response ${abortReason(context)}`);
    throw error;
  }
  return new TextDecoder().decode(Buffer.concat(chunks));
}
