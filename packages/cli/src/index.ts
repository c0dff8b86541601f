// @codemode/cli: the `codemode` command, callable from code, and what it is built on. The approval
// inbox is at `@codemode/cli/inbox`.
export { runCli } from "./program.js";
export { EXIT_CODES, type ExitCode } from "./exit-codes.js";
export { loadRuntimeConfig, DEFAULT_CONFIG_FILES, type LoadedConfig } from "./load-config.js";
export { explainStale, type StaleDecision } from "./explain.js";
