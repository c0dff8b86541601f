import type { ExecutionStatus, PendingAction } from "@codemode/core";
import type { ExecutionSummary } from "@codemode/core/operations";
import { ALL_STATUSES } from "@codemode/core/store";
import type { Command } from "commander";
import { CliError } from "../cli-error.js";
import { type CommandContext, wholeNumber } from "../command-context.js";
import { EXIT_CODES } from "../exit-codes.js";
import { ago, clockTime } from "../explain.js";
import { Progress } from "../output/progress.js";
import { abbreviate, type Output } from "../output/terminal.js";
import type { Register } from "./register.js";

interface PageOptions {
  limit?: string;
  cursor?: string;
  all?: boolean;
}

/** `executions`, `pending` and `snippets`: listings, a page at a time or all of them. */
export function registerListings(program: Command, register: Register): void {
  register(
    program
      .command("executions")
      .description("list executions, newest first, a page at a time")
      .option("-s, --status <status...>", `only these statuses (${ALL_STATUSES.join(", ")})`)
      .option("-n, --limit <n>", "executions per page (1-1000)", "20")
      .option("--cursor <cursor>", "the page after this cursor (printed under the previous page)")
      .option("-a, --all", "every page, not just the first"),
    (options: PageOptions & { status?: string[] }) => (context) => listExecutions(context, options),
  );
  register(
    program
      .command("pending")
      .description("list calls waiting for approval, newest first")
      .option("-n, --limit <n>", "actions per page (1-1000)", "20")
      .option("--cursor <cursor>", "the page after this cursor")
      .option("-a, --all", "every page, not just the first"),
    (options: PageOptions) => (context) => listPending(context, options),
  );
  register(program.command("snippets").description("list saved snippets"), () => (context) => listSnippets(context));
}

/** `--status paused completed` or `--status paused,completed`: the statuses named, or a usage error. */
export function statusesOf(values: readonly string[] | undefined): ExecutionStatus[] | undefined {
  const status = values?.flatMap((value) => value.split(",")).filter(Boolean);
  const unknown = status?.filter((value) => !ALL_STATUSES.includes(value as ExecutionStatus)) ?? [];
  if (unknown.length > 0)
    throw new CliError(EXIT_CODES.usage, `unknown status ${unknown.join(", ")}; use ${ALL_STATUSES.join(", ")}`);
  return status as ExecutionStatus[] | undefined;
}

async function listExecutions({ runtime, out }: CommandContext, options: PageOptions & { status?: string[] }) {
  const status = statusesOf(options.status);
  const query = {
    limit: wholeNumber(options.limit, "--limit", 1),
    ...(status?.length ? { status } : {}),
  };
  const page = await readPages(out, "reading executions", options, (cursor) =>
    runtime.executions({ ...query, ...(cursor ? { cursor } : {}) }),
  );
  if (out.json) return void out.document(page);
  if (page.items.length === 0) out.line(status?.length ? `No ${status.join(" or ")} executions.` : "No executions.");
  else
    out.table(
      ["id", "status", "created", "updated", "passes", "pending", "error"],
      page.items.map((item) => executionRow(out, item)),
    );
  morePages(out, page.cursor, "executions", status);
  return undefined;
}

function executionRow(out: Output, item: ExecutionSummary) {
  return [
    item.id,
    out.state(item.status),
    clockTime(item.createdAt),
    ago(item.updatedAt),
    String(item.passes),
    pendingCell(item),
    item.error
      ? abbreviate(`${item.errorCode ? `${item.errorCode}: ` : ""}${item.error}`, 60).replace(/^"|"$/g, "")
      : "",
  ];
}

/** "seq 1", or every seq a batched pause waits on (R-AP-8): "seqs 1, 2, 3". */
function pendingCell(item: ExecutionSummary): string {
  const seqs = Array.isArray(item.pendingSeqs) && item.pendingSeqs.length > 0 ? item.pendingSeqs : [item.pendingSeq];
  const known = seqs.filter((seq): seq is number => seq !== undefined);
  if (known.length === 0) return "";
  if (known.length === 1) return `seq ${known[0]}`;
  const shown = known.slice(0, 6).join(", ");
  return `seqs ${shown}${known.length > 6 ? ` (+${known.length - 6})` : ""}`;
}

async function listPending({ runtime, out }: CommandContext, options: PageOptions) {
  const limit = wholeNumber(options.limit, "--limit", 1);
  const page = await readPages(out, "reading pending actions", options, (cursor) =>
    runtime.pending({ limit, ...(cursor ? { cursor } : {}) }),
  );
  if (out.json) return void out.document(page);
  if (page.items.length === 0) out.line("Nothing is waiting for approval.");
  else
    out.table(
      ["execution", "seq", "call", "arguments"],
      page.items.map((action: PendingAction) => [
        action.executionId,
        String(action.seq),
        `${action.connector}.${action.method}`,
        abbreviate(action.args, 70),
      ]),
    );
  if (page.items.length > 0)
    out.hint(
      "Approve with: codemode approve <execution> --seq <seq>   deny one call: codemode deny <execution> --seq <seq> --reason <why>   reject the run: codemode reject <execution> --reason <why>",
    );
  morePages(out, page.cursor, "pending");
  return undefined;
}

async function listSnippets({ runtime, out }: CommandContext) {
  const snippets = await runtime.snippets();
  if (out.json) return void out.document(snippets);
  if (snippets.length === 0) out.line("No snippets saved.");
  else
    out.table(
      ["name", "connectors", "saved", "from execution", "description"],
      snippets.map((snippet) => [
        snippet.name,
        snippet.connectors.join(", "),
        clockTime(snippet.createdAt),
        snippet.executionId,
        snippet.description ?? "",
      ]),
    );
  return undefined;
}

/** One page, or with `--all` every page (with progress), as one page without a cursor. */
async function readPages<T>(
  out: Output,
  label: string,
  options: PageOptions,
  read: (cursor: string | undefined) => Promise<{ items: T[]; cursor?: string }>,
): Promise<{ items: T[]; cursor?: string }> {
  if (!options.all) return read(options.cursor);
  const progress = new Progress(label, out.stderr);
  const items: T[] = [];
  let cursor = options.cursor;
  try {
    do {
      const page = await read(cursor);
      items.push(...page.items);
      cursor = page.cursor;
      progress.update(`${items.length} so far`);
    } while (cursor);
  } finally {
    progress.done();
  }
  return { items };
}

function morePages(out: Output, cursor: string | undefined, command: string, status?: string[]): void {
  if (!cursor) return;
  const filter = status?.length ? ` --status ${status.join(" ")}` : "";
  out.hint(`More: codemode ${command}${filter} --cursor ${cursor}   (or --all)`);
}
