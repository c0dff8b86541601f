import { PassThrough, type Readable, type Writable } from "node:stream";
import { StdioServerTransport, serveStdio } from "@modelcontextprotocol/server/stdio";
import { createModernServer, type ModernServerSetup } from "./modern-server.js";
import { claimsRevision } from "./protocol-names.js";

export interface StdioEitherProtocolOptions {
  /** Serves a 2025-11-25 client (it opened with `initialize`) over these streams. */
  legacy(input: Readable, output: Writable): Promise<{ close(): Promise<void> }>;
  /** What a 2026-07-28 client is served from. */
  modern: ModernServerSetup;
  /** Default: this process's stdin and stdout. */
  input?: Readable;
  output?: Writable;
}

/** The largest first message read before choosing: a program may be 1,000,000 characters, in JSON. */
const MAX_FIRST_MESSAGE_BYTES = 8 * 1024 * 1024;

/**
 * Serves stdio in whichever protocol the client opens with, read from its first message: a
 * request that claims a 2026-07-28 revision (or `server/discover`, a client finding out) is
 * served by the 2026 server for the whole connection, anything else (an `initialize`) by the 2025
 * one. The first message is read, not consumed: the chosen server reads it again.
 *
 * @example
 * // `StdioServerTransport` of @modelcontextprotocol/sdk (1.x) for the 2025 side
 * await serveStdioEitherProtocol({ legacy: (input, output) => connect(new StdioServerTransport(input, output)), modern });
 */
export async function serveStdioEitherProtocol(
  options: StdioEitherProtocolOptions,
): Promise<{ close(): Promise<void> }> {
  const input = options.input ?? process.stdin;
  const output = options.output ?? process.stdout;
  const first = await readFirstLine(input);
  const replay = new PassThrough();
  replay.write(first.buffered);
  if (first.ended) replay.end();
  else input.pipe(replay);
  // A failing stdin reaches the transport, which listens on the replay, as it would on stdin.
  input.on("error", (error) => replay.destroy(error));
  if (!opensModern(first.line)) return await options.legacy(replay, output);
  const handle = serveStdio(() => createModernServer(options.modern), {
    transport: new StdioServerTransport(replay, output),
  });
  return { close: () => handle.close() };
}

/** Whether a client's first message opens the 2026-07-28 protocol: it claims a revision, or finds the server out. */
function opensModern(line: string): boolean {
  let message: unknown;
  try {
    message = JSON.parse(line);
  } catch {
    return false;
  }
  return (message as { method?: unknown } | null)?.method === "server/discover" || claimsRevision(message);
}

/** Reads until the first newline (or the end, or the size bound); what was read is kept to be read again. */
function readFirstLine(input: Readable): Promise<{ line: string; buffered: Buffer; ended: boolean }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (ended: boolean) => {
      input.off("data", onData);
      input.off("end", onEnd);
      input.off("error", reject);
      input.pause();
      const buffered = Buffer.concat(chunks);
      const newline = buffered.indexOf(10);
      resolve({
        line: buffered.subarray(0, newline < 0 ? buffered.length : newline).toString("utf8"),
        buffered,
        ended,
      });
    };
    const onData = (chunk: Buffer | string) => {
      const bytes = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
      chunks.push(bytes);
      size += bytes.length;
      if (bytes.includes(10) || size > MAX_FIRST_MESSAGE_BYTES) finish(false);
    };
    const onEnd = () => finish(true);
    input.on("data", onData);
    input.once("end", onEnd);
    input.once("error", reject);
  });
}
