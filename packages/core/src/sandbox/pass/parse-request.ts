import type { SandboxRequest } from "../executor.js";
import { clipText, DEFAULT_SANDBOX_LIMITS } from "../sandbox-limits.js";

/** Largest request text the sandbox may send; durable-value limits are checked by the runtime. */
const MAX_REQUEST_CHARS = 64 * 1024 * 1024;
/** A message the sandbox sends is cut there already; this only bounds a tampered one. */
const MAX_MESSAGE_CHARS = DEFAULT_SANDBOX_LIMITS.maxMessageChars;

/**
 * Checks a request from the sandbox: the sandbox is hostile, so nothing is assumed. `text` is the
 * request's JSON; `args`, when the sandbox sent it beside the request, is its `args` wire text.
 */
export function parseRequest(
  text: string,
  args?: unknown,
): { ok: true; request: SandboxRequest } | { ok: false; message: string } {
  if (text.length > MAX_REQUEST_CHARS) return { ok: false, message: "the request is too large" };
  if (args !== undefined && (typeof args !== "string" || args.length > MAX_REQUEST_CHARS))
    return { ok: false, message: typeof args === "string" ? "the request is too large" : "malformed request" };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, message: "malformed request" };
  }
  if (typeof value !== "object" || value === null) return { ok: false, message: "malformed request" };
  const record = value as Record<string, unknown>;
  if (args !== undefined) {
    if (record.args !== undefined) return { ok: false, message: "malformed request" };
    record.args = args;
  }
  const isSeq = (seq: unknown): seq is number => typeof seq === "number" && Number.isSafeInteger(seq) && seq >= 0;
  switch (record.type) {
    case "call":
      if (
        isSeq(record.seq) &&
        typeof record.connector === "string" &&
        typeof record.method === "string" &&
        typeof record.args === "string"
      ) {
        return {
          ok: true,
          request: {
            type: "call",
            seq: record.seq,
            connector: record.connector,
            method: record.method,
            args: record.args,
          },
        };
      }
      break;
    case "step":
      if (isSeq(record.seq) && isSeq(record.seqAfter) && typeof record.name === "string") {
        // Exactly one of a value and an error.
        const valued = typeof record.value === "string" && record.error === undefined;
        if (valued || (typeof record.error === "string" && record.value === undefined)) {
          const request: SandboxRequest = {
            type: "step",
            seq: record.seq,
            name: record.name,
            seqAfter: record.seqAfter,
          };
          if (valued) request.value = record.value as string;
          else request.error = record.error as string;
          return { ok: true, request };
        }
      }
      break;
    case "service":
      if (
        typeof record.name === "string" &&
        typeof record.args === "string" &&
        (record.seq === undefined || isSeq(record.seq))
      ) {
        const request: SandboxRequest = { type: "service", name: record.name, args: record.args };
        if (record.seq !== undefined) request.seq = record.seq;
        return { ok: true, request };
      }
      break;
    case "invalid":
      if (
        typeof record.message === "string" &&
        (record.seq === undefined || isSeq(record.seq)) &&
        (record.size === undefined || isSeq(record.size))
      ) {
        const request: SandboxRequest = { type: "invalid", message: clipText(record.message, MAX_MESSAGE_CHARS) };
        if (record.seq !== undefined) request.seq = record.seq;
        if (record.size !== undefined) request.size = record.size;
        return { ok: true, request };
      }
      break;
  }
  return { ok: false, message: "malformed request" };
}
