// The AI SDK's chat client for the browser, without a build step: at start the server bundles the
// few names the page imports from `ai` (the same client useChat wraps) into one ES module with
// rolldown, in memory, and the page's import map points "ai" at it. A bundle is needed because
// some of `ai`'s dependencies are CommonJS, which a browser cannot import as it is.
import { fileURLToPath } from "node:url";
import { build } from "rolldown";

/** What chat.js imports from "ai". */
const CLIENT_EXPORTS = ["AbstractChat", "DefaultChatTransport", "lastAssistantMessageIsCompleteWithApprovalResponses"];
const ENTRY = "\0ai-chat-client";

export interface BrowserModules {
  /** `<script type="importmap">` content: `{ imports: { ai: "/modules/ai.js" } }`. */
  importMap: { imports: Record<string, string> };
  /** The bundle, served at `/modules/ai.js`. */
  code: string;
}

/** Bundles the page's imports from `ai`, resolved from this folder's node_modules, for the browser. */
export async function browserModules(): Promise<BrowserModules> {
  const result = await build({
    input: ENTRY,
    cwd: fileURLToPath(new URL(".", import.meta.url)),
    platform: "browser",
    write: false,
    logLevel: "warn",
    plugins: [
      {
        name: "ai-chat-client",
        resolveId: (id) => (id === ENTRY ? id : null),
        load: (id) => (id === ENTRY ? `export { ${CLIENT_EXPORTS.join(", ")} } from "ai";` : null),
      },
    ],
    output: { format: "esm", minify: true },
  });
  const chunk = result.output.find((output) => output.type === "chunk");
  if (chunk?.type !== "chunk") throw new Error("bundling the ai chat client produced no code");
  return { importMap: { imports: { ai: "/modules/ai.js" } }, code: chunk.code };
}
