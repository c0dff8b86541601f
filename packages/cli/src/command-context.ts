import { relative } from "node:path";
import type { CodemodeRuntime } from "@codemode/core";
import { CliError, fromRuntimeError } from "./cli-error.js";
import { EXIT_CODES, type ExitCode } from "./exit-codes.js";
import { type LoadedConfig, loadRuntimeConfig } from "./load-config.js";
import { Output, visible } from "./output/terminal.js";

/** Options every command takes (they may come before or after the command name). */
export interface GlobalOptions {
  config?: string;
  json?: boolean;
  /** False with `--no-color`. */
  color?: boolean;
}

/** What a command's body works with. */
export interface CommandContext {
  runtime: CodemodeRuntime;
  config: LoadedConfig;
  out: Output;
}

/** How a command ends: an exit code (default 0). */
export type CommandBody = (context: CommandContext) => Promise<ExitCode | undefined>;

/** Where the process's exit code is kept until the command returns. */
export interface ExitState {
  code: ExitCode;
  /** Set by `inbox`: the command keeps running until a signal. */
  keepAlive?: Promise<void>;
}

/**
 * Runs a command body with the runtime of the config: loads it, runs the body, reports a failure
 * in one line on stderr (and as `{ "error": … }` on stdout with `--json`), then closes the
 * runtime and what the config opened.
 */
export async function runCommand(options: GlobalOptions, state: ExitState, body: CommandBody): Promise<void> {
  const out = new Output(options.json === true, options.color !== false);
  let config: LoadedConfig | undefined;
  try {
    config = await loadRuntimeConfig(options.config);
    // A module found by itself runs code with this process's rights: say which one.
    if (config.foundIn === "working directory")
      out.stderr.write(
        `codemode: loaded ${visible(relative(process.cwd(), config.file))} from the working directory (--config names another)\n`,
      );
    state.code = (await body({ runtime: config.runtime, config, out })) ?? EXIT_CODES.ok;
    if (state.keepAlive) await state.keepAlive;
  } catch (error) {
    const failure = fromRuntimeError(error);
    state.code = failure.exitCode;
    report(out, failure);
  } finally {
    if (config) await closeWithin(config, 3_000);
  }
}

export function report(out: Output, failure: CliError): void {
  if (out.json)
    out.document({
      error: { message: failure.message, exitCode: failure.exitCode, ...(failure.code ? { code: failure.code } : {}) },
    });
  out.stderr.write(`codemode: ${failure.message}\n`);
}

/** Closing must not keep the command waiting on a store that is down. */
async function closeWithin(config: LoadedConfig, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
    timer.unref();
  });
  await Promise.race([config.close().catch(() => undefined), timeout]);
  clearTimeout(timer);
}

/** A positive whole number from the command line, or a usage error naming the option. */
export function wholeNumber(value: string | undefined, option: string, minimum = 0): number | undefined {
  if (value === undefined) return undefined;
  const number = Number(value);
  if (!Number.isInteger(number) || number < minimum)
    throw new CliError(
      EXIT_CODES.usage,
      `${option} needs a whole number${minimum > 0 ? ` of at least ${minimum}` : ""}, not ${JSON.stringify(value)}`,
    );
  return number;
}

/** "90s", "30m", "24h", "7d" or milliseconds, as milliseconds. */
export function duration(value: string, option: string): number {
  const match = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?$/.exec(value.trim());
  if (!match)
    throw new CliError(
      EXIT_CODES.usage,
      `${option} needs a duration such as 30m, 24h or 7d, not ${JSON.stringify(value)}`,
    );
  const units: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };
  return Math.round(Number(match[1]) * (units[match[2] ?? "ms"] ?? 1));
}

/**
 * Refuses (exit 6) a runtime from an older `@codemode/core` that lacks `method`: such a config
 * still loads for the other commands.
 */
export function requireRuntimeMethod(runtime: CommandContext["runtime"], method: "replayCheck" | "rerun"): void {
  if (typeof runtime[method] !== "function")
    throw new CliError(
      EXIT_CODES.config,
      `the config's runtime has no ${method}; upgrade @codemode/core in the application the config comes from`,
    );
}
