import { existsSync } from "node:fs";
import { relative, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { CodemodeRuntime } from "@codemode/core";
import { errorMessage } from "@codemode/core/adapters";
import { CliError, firstLine, storeUnreachable } from "./cli-error.js";
import { EXIT_CODES } from "./exit-codes.js";
import type { InboxQueue } from "./inbox/inbox-options.js";
import { storeFailure } from "./store-failure.js";

/** What a config module gave the command. */
export interface LoadedConfig {
  runtime: CodemodeRuntime;
  /** A fleet queue (`@codemode/bullmq`) for the inbox: approvals go to workers, events drive live updates. */
  queue?: InboxQueue;
  /** The config file, absolute. */
  file: string;
  /** Who named it: `--config`, `CODEMODE_CONFIG`, or nobody (found in the working directory). */
  foundIn: "option" | "environment" | "working directory";
  /** Closes the runtime, then what the config opened (its `close` export: storages, queues). */
  close(): Promise<void>;
}

/** Looked for in the working directory when neither `--config` nor `CODEMODE_CONFIG` names one. */
export const DEFAULT_CONFIG_FILES = [
  "codemode.config.ts",
  "codemode.config.mts",
  "codemode.config.js",
  "codemode.config.mjs",
];

const RUNTIME_METHODS = [
  "executions",
  "execution",
  "pending",
  "approve",
  "reject",
  "rollback",
  "pruneExecutions",
  "expirePaused",
  "recover",
  "snippets",
  "close",
] as const;

/**
 * Loads the application's runtime from a config module. The module's default export (or an
 * export named `runtime`) is a runtime, or a function returning one — or returning
 * `{ runtime, close?, queue? }` — possibly async. Optional exports `close` (what to close after
 * the runtime: storages) and `queue` (a `@codemode/bullmq` queue for the inbox). Node 24 loads
 * `.ts` configs by stripping their types. A store that cannot be reached or opened while the module
 * loads (a SQLite path that is a folder, a refused connection) is `EXIT_CODES.store`, not `config`.
 *
 * @example
 * // codemode.config.ts
 * const storage = sqliteStorage("./.codemode/runs.db");
 * export default createCodemodeRuntime({ connectors: [github], storage });
 * export const close = () => storage.close();
 */
export async function loadRuntimeConfig(
  path?: string,
  cwd = process.cwd(),
  env: NodeJS.ProcessEnv = process.env,
): Promise<LoadedConfig> {
  const file = resolveConfigFile(path ?? env.CODEMODE_CONFIG, cwd);
  const foundIn = path ? "option" : env.CODEMODE_CONFIG ? "environment" : "working directory";
  const shown = relative(cwd, file) || file;
  let module: Record<string, unknown>;
  try {
    module = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  } catch (error) {
    throwIfStoreFailed(error, shown);
    throw configError(
      `could not load the config ${shown}: ${describe(error)}`,
      "fix the error above in the module, or point --config at the right file",
    );
  }
  let produced: unknown = module.default ?? module.runtime;
  try {
    if (typeof produced === "function") produced = await (produced as () => unknown)();
  } catch (error) {
    throwIfStoreFailed(error, shown);
    throw configError(
      `the config ${shown} failed while creating the runtime: ${describe(error)}`,
      "check what its factory opens (storage URL, files)",
    );
  }
  const bundle = isRuntime(produced)
    ? { runtime: produced }
    : (produced as { runtime?: unknown; close?: unknown; queue?: unknown } | undefined);
  if (!bundle || !isRuntime(bundle.runtime)) {
    throw configError(
      `the config ${shown} does not export a Code Mode runtime`,
      'export default a runtime from createCodemodeRuntime (or "runtime", or a function returning one)',
    );
  }
  const runtime = bundle.runtime;
  const closers = [bundle.close, module.close].filter(
    (candidate): candidate is () => unknown => typeof candidate === "function",
  );
  const queue = (bundle.queue ?? module.queue) as InboxQueue | undefined;
  return {
    runtime,
    file,
    foundIn,
    ...(queue ? { queue } : {}),
    async close() {
      await runtime.close().catch(() => undefined);
      if (queue?.close) await Promise.resolve(queue.close()).catch(() => undefined);
      for (const close of new Set(closers)) await Promise.resolve(close()).catch(() => undefined);
    },
  };
}

/** The config file to load: the one given, or the first default in the working directory. */
export function resolveConfigFile(given: string | undefined, cwd: string): string {
  if (given) {
    const file = resolve(cwd, given);
    if (!existsSync(file))
      throw configError(
        `the config ${given} does not exist`,
        "pass --config with the path of the module that exports your runtime",
      );
    return file;
  }
  for (const name of DEFAULT_CONFIG_FILES) {
    const file = resolve(cwd, name);
    if (existsSync(file)) return file;
  }
  throw configError(
    `no config found (looked for ${DEFAULT_CONFIG_FILES.join(", ")} in ${cwd})`,
    "pass --config ./codemode.config.ts or set CODEMODE_CONFIG",
  );
}

/** Stores open while the config is loaded: one that cannot be reached or opened is exit 7, not a config error. */
function throwIfStoreFailed(error: unknown, shown: string): void {
  const failure = storeFailure(error);
  if (failure) throw storeUnreachable(failure, `the config ${shown} could not open its store`);
}

function configError(problem: string, remedy: string): CliError {
  return new CliError(EXIT_CODES.config, `${problem}; ${remedy}`);
}

function describe(error: unknown): string {
  return firstLine(errorMessage(error)) || "it threw without a message";
}

function isRuntime(value: unknown): value is CodemodeRuntime {
  if (typeof value !== "object" || value === null) return false;
  const candidate = value as Record<string, unknown>;
  return RUNTIME_METHODS.every((method) => typeof candidate[method] === "function");
}
