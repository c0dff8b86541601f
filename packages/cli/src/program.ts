import { Command, CommanderError } from "commander";
import type { ExitState } from "./command-context.js";
import { registerCancel } from "./commands/cancel.js";
import { registerDecisions } from "./commands/decide.js";
import { registerInbox } from "./commands/inbox.js";
import { registerListings } from "./commands/list.js";
import { registerMaintenance } from "./commands/maintenance.js";
import { createRegister } from "./commands/register.js";
import { registerReplayCheck } from "./commands/replay-check.js";
import { registerShow } from "./commands/show.js";
import { registerSurgery } from "./commands/surgery.js";
import { EXIT_CODES, type ExitCode } from "./exit-codes.js";

const EXIT_HELP = `
Exit codes:
  0  done                         4  not possible in the run's state (not paused, already decided)
  1  the run failed               5  busy: another process holds the run; try again
  2  usage error                  6  the config could not be loaded
  3  unknown execution id         7  the store is unreachable
                                  8  replay-check: a stored run diverges from the current tools
                                  9  a decision refused (INVALID_DECISION): nothing changed
 70  internal error

The config (--config, $CODEMODE_CONFIG, or ./codemode.config.{ts,mts,js,mjs}) exports your runtime:
  export default createCodemodeRuntime({ connectors, storage });   // or a function returning one
  export const close = () => storage.close();                       // optional
Every command, option and exit code: https://github.com/codemode-for-node/codemode/blob/main/docs/operating.md`;

/** The `codemode` program; its actions record their exit code in `state`. */
export function createProgram(state: ExitState): Command {
  const program = new Command("codemode")
    .description(
      "Operate a Code Mode runtime: list and inspect executions, approve, edit, deny or reject paused calls, cancel runs, roll back, expire, recover, check paused runs against changed tools, and serve an approval inbox.",
    )
    .option("-c, --config <module>", "the config module that exports your runtime (.ts, .js, .mjs)")
    .option("--json", "print the result as JSON (errors as { error } on stdout too)")
    .option("--no-color", "no colours (also when NO_COLOR is set or output is not a terminal)")
    .showHelpAfterError("(codemode --help lists the commands)")
    .configureHelp({ showGlobalOptions: true })
    .addHelpText("after", EXIT_HELP)
    .exitOverride();
  const register = createRegister(state);
  registerListings(program, register);
  registerShow(program, register);
  registerDecisions(program, register);
  registerCancel(program, register);
  registerMaintenance(program, register);
  registerReplayCheck(program, register);
  registerSurgery(program, register);
  registerInbox(program, register, state);
  for (const command of program.commands) command.exitOverride();
  return program;
}

/**
 * Runs `codemode` with these arguments (without the node and script paths) and resolves to the
 * exit code; the bin passes it to `process.exit`.
 *
 * @example
 * process.exitCode = await runCli(["pending", "--json"]);
 */
export async function runCli(argv: readonly string[]): Promise<ExitCode> {
  const state: ExitState = { code: EXIT_CODES.ok };
  const program = createProgram(state);
  if (argv.length === 0) {
    program.outputHelp({ error: true });
    return EXIT_CODES.usage;
  }
  try {
    await program.parseAsync([...argv], { from: "user" });
  } catch (error) {
    if (error instanceof CommanderError) {
      if (error.code === "commander.helpDisplayed" || error.code === "commander.version") return EXIT_CODES.ok;
      return EXIT_CODES.usage;
    }
    throw error;
  }
  return state.code;
}
