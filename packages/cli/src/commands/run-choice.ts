import { CliError } from "../cli-error.js";
import { duration, wholeNumber } from "../command-context.js";
import { EXIT_CODES } from "../exit-codes.js";

// How the bulk commands (replay-check, rerun) choose stored runs: one `--id`, or `--since` and
// `--limit` (with flags of their own), never both.

/** The most runs one bulk command takes: the runtime's own bound. */
export const MAX_RUNS = 1_000;

/** The `--limit` option's help, with the bound. */
export const LIMIT_HELP = `at most this many runs, newest first (1-${MAX_RUNS}, default 100)`;

export interface RunChoiceOptions {
  id?: string;
  since?: string;
  limit?: string;
}

/**
 * The `--id` given, checked: not empty, and alone (`others` are the command's own flags that
 * choose runs, named as given); undefined without one. `action` says what the command does with
 * one execution ("checks", "reruns").
 */
export function onlyId(
  options: RunChoiceOptions,
  action: string,
  others: Record<string, unknown> = {},
): string | undefined {
  if (options.id === undefined) return undefined;
  const choosers = Object.entries({ "--since": options.since, "--limit": options.limit, ...others })
    .filter(([, value]) => value !== undefined)
    .map(([flag]) => flag);
  if (choosers.length > 0)
    throw new CliError(
      EXIT_CODES.usage,
      `--id ${action} one execution; leave out ${choosers.join(" and ")}, which choose the runs without it`,
    );
  if (options.id.trim() === "") throw new CliError(EXIT_CODES.usage, "--id needs an execution id");
  return options.id;
}

/** `--since` and `--limit` as a query's `since` (ms since the epoch) and `limit`. */
export function runWindow(options: RunChoiceOptions, now: number): { since?: number; limit?: number } {
  const limit = wholeNumber(options.limit, "--limit", 1);
  if (limit !== undefined && limit > MAX_RUNS)
    throw new CliError(
      EXIT_CODES.usage,
      `--limit needs a whole number from 1 to ${MAX_RUNS}, not ${JSON.stringify(options.limit)}`,
    );
  return {
    ...(options.since !== undefined ? { since: now - sinceMs(options.since) } : {}),
    ...(limit !== undefined ? { limit } : {}),
  };
}

/** "90s", "30m", "24h", "7d" in ms. The unit is required: would a bare `--since 30` be minutes, or ms? */
function sinceMs(value: string): number {
  if (!/^\d+[smhd]$/.test(value.trim()))
    throw new CliError(
      EXIT_CODES.usage,
      `--since needs a duration such as 90s, 30m, 24h or 7d (a whole number, then s, m, h or d), not ${JSON.stringify(value)}`,
    );
  return duration(value, "--since");
}
