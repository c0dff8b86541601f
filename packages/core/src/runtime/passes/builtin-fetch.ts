import type { ToolDefinition } from "../../connectors/define-connector.js";
import { errorMessage } from "../../error-message.js";
import { MAX_DURABLE_CHARS } from "../../log/durable-value.js";
import { CodemodeError } from "../../outcome.js";

interface FetchArgs {
  input?: unknown;
  init?: { method?: unknown; headers?: unknown; body?: unknown } | null;
}

/**
 * R-SB-5: the sandbox's `fetch`, run on the host as the built-in tool `codemode.fetch`. It goes
 * through the same call path as every connector call: written ahead, recorded with its response
 * (status, headers, body as text), and replayed instead of repeated. The body counts against
 * the durable limit; larger downloads belong in a connector that stores them.
 */
export function fetchTool(timeoutMs: number): ToolDefinition {
  return {
    description: "fetch(input, init) run on the host",
    execute: async (args: unknown) => {
      const { input, init } = (args ?? {}) as FetchArgs;
      const url = String(input);
      const options = init ?? {};
      const abort = new AbortController();
      const timer = setTimeout(() => abort.abort(new Error(`no response within ${timeoutMs} ms`)), timeoutMs);
      try {
        const response = await fetch(url, {
          method: typeof options.method === "string" ? options.method : "GET",
          headers: (typeof options.headers === "object" && options.headers !== null ? options.headers : {}) as Record<
            string,
            string
          >,
          body: typeof options.body === "string" || options.body instanceof Uint8Array ? options.body : null,
          signal: abort.signal,
        });
        const body = await readTextWithin(response, MAX_DURABLE_CHARS, abort, url);
        return {
          url: response.url,
          status: response.status,
          statusText: response.statusText,
          headers: Object.fromEntries(response.headers),
          body,
        };
      } catch (error) {
        if (CodemodeError.isInstance(error)) throw error;
        throw new Error(`fetch failed: ${errorMessage(error)}`);
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

/**
 * Reads a response body as text, stopping as soon as it passes what the log may keep: a huge
 * download must not be held in the host's memory only to be refused afterwards (R-DV-1).
 */
async function readTextWithin(
  response: Response,
  maxChars: number,
  abort: AbortController,
  url: string,
): Promise<string> {
  if (!response.body) return "";
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let text = "";
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
    if (text.length > maxChars) {
      abort.abort();
      await reader.cancel().catch(() => undefined);
      throw new CodemodeError(
        "VALUE_TOO_LARGE",
        `the response of fetch(${JSON.stringify(url).slice(0, 100)}) is over the ${maxChars.toLocaleString("en")}-character limit for values kept for replay: download it in a connector that stores it and returns a reference such as a path`,
      );
    }
  }
  return text + decoder.decode();
}
