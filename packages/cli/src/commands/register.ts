import type { Command } from "commander";
import {
  type CommandBody,
  type CommandContext,
  type ExitState,
  type GlobalOptions,
  runCommand,
} from "../command-context.js";
import type { ExitCode } from "../exit-codes.js";

/**
 * Attaches a body to a commander command: the body is built from the command's options and
 * positional arguments and runs with the config's runtime (`runCommand`).
 */
// biome-ignore lint/suspicious/noExplicitAny: commander hands each action its own option shape
export type Register = (command: Command, build: (options: any, ...positional: string[]) => CommandBody) => void;

export function createRegister(state: ExitState): Register {
  return (command, build) => {
    command.action(async (...args: unknown[]) => {
      const self = args.at(-1) as Command;
      const options = args.at(-2);
      const positional = args.slice(0, -2) as string[];
      await runCommand(self.optsWithGlobals<GlobalOptions>(), state, build(options, ...positional));
    });
  };
}

/**
 * The body of a command whose one positional argument is an execution id: `run(context, id, options)`.
 *
 * @example
 * register(program.command("show").argument("<id>"), onExecution(show));
 */
export function onExecution<O>(
  run: (context: CommandContext, executionId: string, options: O) => Promise<ExitCode | undefined>,
): (options: O, executionId?: string) => CommandBody {
  return (options, executionId = "") =>
    (context) =>
      run(context, executionId, options);
}
