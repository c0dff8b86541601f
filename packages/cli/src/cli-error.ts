import { CodemodeError, type ErrorCode } from "@codemode/core";
import { errorMessage, isErrorNamed } from "@codemode/core/adapters";
import { EXIT_CODES, type ExitCode } from "./exit-codes.js";
import { type StoreFailure, storeFailure } from "./store-failure.js";

/** A failure the command reports in one line (with what to do) and an exit code. */
export class CliError extends Error {
  override readonly name = "CliError";
  constructor(
    readonly exitCode: ExitCode,
    message: string,
    /** The runtime's error code, when the failure came from one. */
    readonly code?: string,
  ) {
    super(message);
  }

  // A brand check, like CodemodeError.isInstance: the name and field, so that an error from
  // another copy of the package is still recognised.
  static isInstance(error: unknown): error is CliError {
    return isErrorNamed(error, "CliError") && typeof (error as { exitCode?: unknown }).exitCode === "number";
  }
}

/** The exit code a runtime error code stands for. */
export function exitCodeOf(code: ErrorCode | string | undefined): ExitCode {
  switch (code) {
    case "NOT_FOUND":
      return EXIT_CODES.notFound;
    case "NOT_PAUSED":
    case "MISSING_CONNECTOR":
      return EXIT_CODES.conflict;
    case "BUSY":
      return EXIT_CODES.busy;
    case "STORAGE_ERROR":
      return EXIT_CODES.store;
    case "INVALID_DECISION":
      return EXIT_CODES.invalidDecision;
    default:
      return EXIT_CODES.runFailed;
  }
}

/** The first line of a message: a one-line report never spills a stack or a multi-line cause. */
export function firstLine(message: string): string {
  return message.split("\n", 1)[0]?.trim() ?? "";
}

/**
 * The store could not be reached (a server) or opened (a SQLite file), as exit 7 with what to
 * check. `where` names the config when the store failed while it was being loaded.
 */
export function storeUnreachable(failure: StoreFailure | string, where?: string): CliError {
  const { kind, message } = typeof failure === "string" ? { kind: "server", message: failure } : failure;
  const problem = `${where ? `${where}: ` : ""}${firstLine(message) || "it failed without a message"}`;
  const remedy =
    kind === "file"
      ? "check that the config's SQLite path names a file this process can create and write (not a folder)"
      : "check that it is running and that the config points at it";
  return new CliError(EXIT_CODES.store, `the store is unreachable (${problem}); ${remedy}`, "STORAGE_ERROR");
}

export function unknownExecution(executionId: string): CliError {
  return new CliError(
    EXIT_CODES.notFound,
    `no execution ${executionId} in the store; list them with: codemode executions`,
    "NOT_FOUND",
  );
}

/** A rejection of a runtime read or control operation, as a CliError. */
export function fromRuntimeError(error: unknown): CliError {
  if (CliError.isInstance(error)) return error;
  if (CodemodeError.isInstance(error)) {
    if (error.code === "STORAGE_ERROR")
      return storeUnreachable(storeFailure(error) ?? { kind: "server", message: error.message });
    return new CliError(exitCodeOf(error.code), firstLine(error.message), error.code);
  }
  // A store client's own error that reached the command unwrapped is still the store's.
  const store = storeFailure(error);
  if (store) return storeUnreachable(store);
  const message = errorMessage(error);
  return new CliError(EXIT_CODES.internal, `unexpected failure: ${firstLine(message)}`);
}
