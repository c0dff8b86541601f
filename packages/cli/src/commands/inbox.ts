import { errorMessage } from "@codemode/core/adapters";
import type { Command } from "commander";
import { CliError } from "../cli-error.js";
import { type CommandContext, duration, type ExitState, wholeNumber } from "../command-context.js";
import { EXIT_CODES } from "../exit-codes.js";
import { startApprovalInbox } from "../inbox/server.js";
import { defaultOperator } from "./decide.js";
import type { Register } from "./register.js";

interface InboxOptions {
  port: string;
  host: string;
  token?: string;
  poll?: string;
  allowRemote?: boolean;
  operator?: string;
}

/** `inbox`: serves the approval inbox until Ctrl-C. */
export function registerInbox(program: Command, register: Register, state: ExitState): void {
  register(
    program
      .command("inbox")
      .description("serve the approval inbox: a web page of paused runs whose actions you approve, deny or edit, live")
      .option("-p, --port <port>", "port to listen on (0: any free port)", "8787")
      .option("--host <address>", "address to bind; loopback unless --allow-remote", "127.0.0.1")
      .option("--token <token>", "the token every request needs (default: $CODEMODE_INBOX_TOKEN, or a random one)")
      .option(
        "--poll <duration>",
        "how often open pages check for changes: 2s, 500ms (default 2s; 15s with a fleet queue)",
      )
      .option(
        "--operator <name>",
        "the name decisions are recorded under when the person types none (default: your user name)",
      )
      .option("--allow-remote", "bind a non-loopback address (put TLS in front: the token is all that guards it)"),
    (options: InboxOptions) => (context) => serve(context, options, state),
  );
}

async function serve({ runtime, config, out }: CommandContext, options: InboxOptions, state: ExitState) {
  const port = wholeNumber(options.port, "--port") ?? 8787;
  const token = options.token ?? process.env.CODEMODE_INBOX_TOKEN;
  if (token !== undefined && token.length < 16)
    throw new CliError(EXIT_CODES.usage, "--token needs at least 16 characters");
  let inbox: Awaited<ReturnType<typeof startApprovalInbox>>;
  try {
    inbox = await startApprovalInbox({
      runtime,
      port,
      host: options.host,
      allowRemote: options.allowRemote === true,
      operator: options.operator ?? defaultOperator(),
      ...(token ? { token } : {}),
      ...(config.queue ? { queue: config.queue } : {}),
      ...(options.poll ? { pollMs: Math.max(100, duration(options.poll, "--poll")) } : {}),
    });
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === "EADDRINUSE")
      throw new CliError(
        EXIT_CODES.usage,
        `port ${port} is in use; pass --port <another> (or --port 0 for any free port)`,
      );
    throw new CliError(EXIT_CODES.usage, errorMessage(error));
  }
  if (out.json)
    out.line(
      JSON.stringify({ url: inbox.url, token: inbox.token, port: inbox.port, queue: config.queue !== undefined }),
    );
  else {
    out.line(`Approval inbox: ${inbox.url}`);
    out.hint(
      `Open that address (every request needs its token). Live updates: ${config.queue ? "the fleet's events" : "polling the listing"}. Ctrl-C stops it.`,
    );
  }
  state.keepAlive = new Promise<void>((resolve) => {
    const stop = () => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      inbox.close().finally(resolve);
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });
  return EXIT_CODES.ok;
}
