import type { IncomingMessage } from "node:http";

/** Room for an edit's arguments (64 K characters of JSON) once percent-encoded. */
const MAX_BODY_BYTES = 262_144;

/** Why a body was refused, with the status to answer. */
export class FormError extends Error {
  override readonly name = "FormError";
  constructor(
    readonly status: 400 | 413 | 415,
    message: string,
  ) {
    super(message);
  }
}

/**
 * A decision form's fields, from `application/x-www-form-urlencoded` or a JSON object (other
 * values than strings become their JSON text), at most 256 KB. The fields sit in an object
 * without a prototype, and a field given twice is refused: no guessing which one was meant.
 */
export async function readForm(request: IncomingMessage): Promise<Record<string, string>> {
  const declared = Number(request.headers["content-length"] ?? 0);
  if (declared > MAX_BODY_BYTES) throw new FormError(413, "the request body is too large");
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new FormError(413, "the request body is too large");
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString("utf8");
  const type = request.headers["content-type"] ?? "";
  const fields: Record<string, string> = Object.create(null);
  if (type.includes("application/json")) {
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : {};
    } catch {
      throw new FormError(400, "the JSON body does not parse");
    }
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
      throw new FormError(400, "the JSON body must be an object");
    for (const [key, value] of Object.entries(parsed))
      fields[key] = typeof value === "string" ? value : JSON.stringify(value);
    return fields;
  }
  if (type !== "" && !type.includes("application/x-www-form-urlencoded"))
    throw new FormError(415, "send the form as application/x-www-form-urlencoded or JSON");
  for (const [key, value] of new URLSearchParams(text)) {
    if (Object.hasOwn(fields, key))
      throw new FormError(400, `the field ${JSON.stringify(key.slice(0, 40))} is given twice`);
    fields[key] = value;
  }
  return fields;
}
