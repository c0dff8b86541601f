import type { Command } from "commander";
import { type CommandBody, type ExitState, type GlobalOptions, runCommand } from "../command-context.js";

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
