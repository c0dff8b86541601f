import type { IncomingMessage } from "node:http";

const MAX_BODY_BYTES = 16_384;

/** A decision form's fields, from `application/x-www-form-urlencoded` or JSON; at most 16 KB. */
export async function readForm(request: IncomingMessage): Promise<Record<string, string>> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new RangeError("the request body is too large");
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString("utf8");
  const type = request.headers["content-type"] ?? "";
  if (type.includes("application/json")) {
    const parsed: unknown = text ? JSON.parse(text) : {};
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
      throw new TypeError("the JSON body must be an object");
    return Object.fromEntries(
      Object.entries(parsed).map(([key, value]) => [key, typeof value === "string" ? value : JSON.stringify(value)]),
    );
  }
  return Object.fromEntries(new URLSearchParams(text));
}
