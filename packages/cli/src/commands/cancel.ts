import type { Command } from "commander";
import { CliError, unknownExecution } from "../cli-error.js";
import { type CommandContext, wholeNumber } from "../command-context.js";
import { EXIT_CODES } from "../exit-codes.js";
import { visibleOnOneLine } from "../output/terminal.js";
import { defaultOperator } from "./decide.js";
import { onExecution, type Register } from "./register.js";

interface CancelOptions {
  by?: string;
  reason?: string;
  wait?: string;
}

/**
 * `cancel`: ends a run wherever it stands (`runtime.cancel`): a paused run is rejected with its
 * pending calls closed, a running pass is stopped in whatever process runs it.
 */
export function registerCancel(program: Command, register: Register): void {
  register(
    program
      .command("cancel")
      .description(
        "cancel a run: a paused one is rejected with its pending calls closed; a running pass is stopped, in whatever process runs it",
      )
      .argument("<id>", "the execution id")
      .option("--by <name>", "who cancels, for the audit trail (default: $CODEMODE_OPERATOR or your user name)")
      .option("--reason <text>", "why, for the audit trail")
      .option(
        "--wait <ms>",
        "how long to wait for a pass in another process to stop (default: the runtime's lockWaitMs)",
      ),
    onExecution(cancel),
  );
}

async function cancel({ runtime, out }: CommandContext, executionId: string, options: CancelOptions) {
  const waitMs = wholeNumber(options.wait, "--wait");
  const by = options.by ?? defaultOperator();
  const report = await runtime.cancel({
    executionId,
    by,
    ...(options.reason ? { reason: options.reason } : {}),
    ...(waitMs === undefined ? {} : { waitMs }),
  });
  const shown = visibleOnOneLine(executionId);
  switch (report.result) {
    case "not_found":
      throw unknownExecution(shown);
    case "ended":
      throw new CliError(
        EXIT_CODES.conflict,
        `execution ${shown} has ended (${report.status}); there is nothing to cancel`,
        "NOT_PAUSED",
      );
    case "requested":
      if (out.json) out.document({ ...report, by });
      else
        out.line(
          `Asked the process running ${shown} to stop it; it reads the request within about a second and the run ends rejected (CANCELLED). Check with: codemode show ${shown}`,
        );
      return EXIT_CODES.ok;
    case "cancelled":
      if (out.json) out.document({ ...report, by });
      else out.line(`Cancelled ${shown}; the run ended rejected (CANCELLED).`);
      return EXIT_CODES.ok;
  }
}
