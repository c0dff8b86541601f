import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { CodemodeRuntime } from "../runtime/handle/index.js";
import type { CodemodeMcpServerOptions } from "./create-codemode-mcp-server.js";

/** What a `codemode-mcp` config module gave: the runtime to serve and the server's options. */
export interface LoadedCodemodeConfig {
  runtime: CodemodeRuntime;
  serverOptions: CodemodeMcpServerOptions;
}

/**
 * Loads a `codemode-mcp` config module. Its default export (or an export named `runtime`) is a
 * runtime, or a function that returns one (or a promise of one) — the place to `await
 * mcpConnector(…)`. An optional export `mcpServerOptions` holds `CodemodeMcpServerOptions`. Node 24
 * loads `.ts` configs by stripping types.
 *
 * @example
 * // codemode.config.ts
 * export default async () => createCodemodeRuntime({ connectors: [await mcpConnector({ name: "notes", client })] });
 * export const mcpServerOptions = { operatorTools: false };
 */
export async function loadCodemodeConfig(path: string, cwd = process.cwd()): Promise<LoadedCodemodeConfig> {
  const file = resolve(cwd, path);
  const module = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  const exported = module.default ?? module.runtime;
  const runtime: unknown = typeof exported === "function" ? await (exported as () => unknown)() : exported;
  if (!isRuntime(runtime)) {
    throw new TypeError(
      `${file} must export (as default, or as "runtime") a Code Mode runtime from createCodemodeRuntime, or a function that returns one`,
    );
  }
  const options: unknown = module.mcpServerOptions;
  if (options !== undefined && (typeof options !== "object" || options === null))
    throw new TypeError(`mcpServerOptions in ${file} must be an object`);
  return { runtime, serverOptions: (options ?? {}) as CodemodeMcpServerOptions };
}

function isRuntime(value: unknown): value is CodemodeRuntime {
  if (typeof value !== "object" || value === null) return false;
  const runtime = value as Record<string, unknown>;
  return ["execute", "approve", "reject", "pending", "search", "describe", "modelDescription", "close"].every(
    (method) => typeof runtime[method] === "function",
  );
}
