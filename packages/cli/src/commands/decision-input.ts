import { closeSync, openSync, readSync } from "node:fs";
import type { DecideInput, Decision } from "@codemode/core";
import { errorMessage } from "@codemode/core/adapters";
import { CliError } from "../cli-error.js";
import { wholeNumber } from "../command-context.js";
import { EXIT_CODES } from "../exit-codes.js";
import { visibleOnOneLine } from "../output/terminal.js";

// The command line of `approve`, `deny` and `decide` turned into the decisions `runtime.decide`
// takes. Only the shape is checked here (a usage error, exit 2); whether a seq is pending and
// whether edited arguments fit the tool is the runtime's to say (NOT_PAUSED, INVALID_DECISION).

/** The largest JSON file `--args-file` and `--file` read: bigger ones are refused, not loaded. */
export const MAX_FILE_BYTES = 16 * 1024 * 1024;

export interface ApproveOptions {
  /** Every `--seq` given, in order (commander collects them). */
  seq?: string[];
  args?: string;
  argsFile?: string;
  grant?: string;
  by?: string;
  reason?: string;
}

/** Commander's collector for a repeatable option. */
export function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

/** The `--seq` values as whole numbers, each once. */
export function seqsOf(values: readonly string[] | undefined): number[] {
  const seqs = (values ?? []).map((value) => wholeNumber(value, "--seq") as number);
  const twice = seqs.find((seq, index) => seqs.indexOf(seq) !== index);
  if (twice !== undefined) throw usage(`--seq ${twice} is given twice`);
  return seqs;
}

/**
 * `approve`'s decisions for `seqs` (the ones given, or every pending one): approvals, each with
 * the grant if any, or with `--args` an edit of the one seq given.
 */
export function approvals(options: ApproveOptions, seqs: readonly number[]): Decision[] {
  const grantCalls = wholeNumber(options.grant, "--grant", 1);
  const grant = grantCalls === undefined ? {} : { grant: { calls: grantCalls } };
  const args = editedArgs(options);
  if (args === undefined) return seqs.map((seq) => ({ seq, decision: "approve", ...grant }));
  return [{ seq: seqs[0] as number, decision: "edit", args: args.value, ...grant }];
}

/** Refuses `--grant` without exactly one `--seq`: a grant is per approved call, so grants on several would add up (R-AP-9). */
export function checkGrantUsage(options: ApproveOptions): void {
  if (options.grant === undefined) return;
  const count = options.seq?.length ?? 0;
  if (count !== 1)
    throw usage(
      `--grant goes with one call: give exactly one --seq (${count === 0 ? "none was given" : `${count} were given`})`,
    );
}

/** Refuses `--args` that cannot make one edit, before anything is read: zero or several `--seq`, or both sources. */
export function checkEditUsage(options: ApproveOptions): void {
  if (options.args === undefined && options.argsFile === undefined) return;
  if (options.args !== undefined && options.argsFile !== undefined)
    throw usage("give the edited arguments once: --args or --args-file, not both");
  const count = options.seq?.length ?? 0;
  if (count !== 1)
    throw usage(
      `--args edits one call: give exactly one --seq (${count === 0 ? "none was given" : `${count} were given`})`,
    );
}

/** The arguments of `--args` or `--args-file`, parsed; undefined when neither is given. */
function editedArgs(options: ApproveOptions): { value: unknown } | undefined {
  checkEditUsage(options);
  if (options.args !== undefined) return { value: parseJson(options.args, "--args") };
  if (options.argsFile !== undefined)
    return { value: parseJson(readJsonFile(options.argsFile, "--args-file"), `--args-file ${options.argsFile}`) };
  return undefined;
}

/**
 * `decide --file`: `{ "decisions": [...], "by"?, "reason"? }` or a bare array of decisions. The
 * decisions themselves are checked by the runtime (INVALID_DECISION names the one at fault).
 */
export function decisionsFile(path: string): Omit<DecideInput, "executionId"> {
  const where = `--file ${path}`;
  const parsed = parseJson(readJsonFile(path, "--file"), where);
  if (Array.isArray(parsed)) return { decisions: parsed as Decision[] };
  const shape = `${where} must hold { "decisions": [...], "by"?: "...", "reason"?: "..." } or an array of decisions`;
  if (typeof parsed !== "object" || parsed === null) throw usage(shape);
  const fields = parsed as Record<string, unknown>;
  const unknown = Object.keys(fields).find((key) => !["decisions", "by", "reason"].includes(key));
  if (unknown !== undefined) throw usage(`${shape}; it has ${JSON.stringify(unknown.slice(0, 40))}`);
  if (!Array.isArray(fields.decisions)) throw usage(shape);
  for (const key of ["by", "reason"] as const)
    if (fields[key] !== undefined && typeof fields[key] !== "string")
      throw usage(`${where}: "${key}" must be a string`);
  return {
    decisions: fields.decisions as Decision[],
    ...(typeof fields.by === "string" ? { by: fields.by } : {}),
    ...(typeof fields.reason === "string" ? { reason: fields.reason } : {}),
  };
}

function readJsonFile(path: string, option: string): string {
  try {
    return readBounded(path);
  } catch (error) {
    throw usage(`could not read ${option} ${path}: ${errorMessage(error)}`);
  }
}

/**
 * The file's text, read until its end or one byte past the bound, whatever `stat` says of it: a
 * link to `/dev/zero`, a device or a file that grows while it is read stops at the bound.
 */
function readBounded(path: string): string {
  const fd = openSync(path, "r");
  try {
    const buffer = Buffer.allocUnsafe(MAX_FILE_BYTES + 1);
    let filled = 0;
    while (filled < buffer.length) {
      const read = readSync(fd, buffer, filled, buffer.length - filled, null);
      if (read === 0) break;
      filled += read;
    }
    if (filled > MAX_FILE_BYTES)
      throw new Error(`it has more than ${MAX_FILE_BYTES} bytes; at most that many are read`);
    return buffer.toString("utf8", 0, filled);
  } finally {
    closeSync(fd);
  }
}

function parseJson(text: string, where: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw usage(`${where} is not JSON: ${errorMessage(error)}`);
  }
}

/** A usage error; a file's text it quotes (a JSON parser's message does) is shown, not obeyed. */
function usage(message: string): CliError {
  return new CliError(EXIT_CODES.usage, visibleOnOneLine(message));
}
