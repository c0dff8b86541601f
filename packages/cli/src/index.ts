// @codemode/cli: the `codemode` command, callable from code, and what it is built on. The approval
// inbox is at `@codemode/cli/inbox`.

export { EXIT_CODES, type ExitCode } from "./exit-codes.js";
export { explainStale, type StaleDecision } from "./explain.js";
export { DEFAULT_CONFIG_FILES, type LoadedConfig, loadRuntimeConfig } from "./load-config.js";
export { runCli } from "./program.js";
