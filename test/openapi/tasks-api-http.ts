/**
 * The tasks API's HTTP plumbing on node:http: the request as it is recorded, errors as JSON
 * answers with a code, the body and query parameters read and checked, and page cursors.
 */
import type { IncomingMessage, ServerResponse } from "node:http";

/** A request as the API received it. */
export interface RecordedRequest {
  method: string;
  /** The path without the query string. */
  path: string;
  query: Record<string, string>;
  /** Lower-cased names; a header sent more than once is joined with ", ". */
  headers: Record<string, string | undefined>;
  /** The parsed JSON body, the raw text when it is not JSON, undefined when there is none. */
  body: unknown;
}

/** An error the API answers with: its status, and a JSON body with `code` and `message`. */
export class HttpError extends Error {
  readonly status: number;
  readonly code: string;
  constructor(status: number, code: string, message: string) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

export const badRequest = (message: string) => new HttpError(400, "invalid_request", message);
export const notFound = (message: string) => new HttpError(404, "not_found", message);

/** Answers `value` as JSON. */
export function sendJson(
  res: ServerResponse,
  status: number,
  value: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(value);
  res.writeHead(status, {
    "content-type": "application/json; charset=utf-8",
    "content-length": String(Buffer.byteLength(text)),
    ...headers,
  });
  res.end(text);
}

/** Answers an error as JSON (401 with a WWW-Authenticate challenge). */
export function sendError(res: ServerResponse, error: HttpError): void {
  const headers: Record<string, string> = error.status === 401 ? { "www-authenticate": 'Bearer realm="tasks"' } : {};
  sendJson(res, error.status, { code: error.code, message: error.message }, headers);
}

/** The body: parsed JSON, the raw text when it is not JSON, undefined when there is none. */
export async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  if (chunks.length === 0) return undefined;
  const text = Buffer.concat(chunks).toString("utf8");
  if (text === "") return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** An integer query parameter from `min` to `max`, `fallback` when absent; 400 otherwise. */
export function integerParam(
  query: Record<string, string>,
  name: string,
  fallback: number,
  min: number,
  max = Infinity,
) {
  const raw = query[name];
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!/^-?\d+$/.test(raw) || value < min || value > max) {
    throw badRequest(`${name} must be an integer from ${min}${max === Infinity ? " up" : ` to ${max}`}`);
  }
  return value;
}

/** The body, checked to be a JSON object; 400 otherwise. */
export function objectBody(body: unknown): Record<string, unknown> {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw badRequest("the body must be a JSON object");
  }
  return body as Record<string, unknown>;
}

/** The opaque cursor of the page after `afterId`. */
export function encodeCursor(afterId: number): string {
  return Buffer.from(JSON.stringify({ after: afterId })).toString("base64url");
}

/** The id a cursor this API gave out points after; 400 for any other cursor. */
export function decodeCursor(cursor: string): number {
  try {
    const value = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as { after?: unknown };
    if (typeof value.after === "number" && Number.isInteger(value.after)) return value.after;
  } catch {
    // fall through
  }
  throw badRequest("cursor is not one this API gave out");
}
