/** MCP's log levels, least severe first (RFC 5424's, as `logging/setLevel` and `notifications/message` use them). */
export const LOG_LEVELS = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export function isLogLevel(value: unknown): value is LogLevel {
  return typeof value === "string" && (LOG_LEVELS as readonly string[]).includes(value);
}

/** Whether a message at `level` reaches a client that asked for `threshold` and above. */
export function atLeast(level: LogLevel, threshold: LogLevel): boolean {
  return LOG_LEVELS.indexOf(level) >= LOG_LEVELS.indexOf(threshold);
}

/** One `notifications/message`: a run's progress note as a log line. */
export interface RunLogMessage {
  level: LogLevel;
  /** "console" for the program's own lines, "codemode" for what the runtime did. */
  logger: string;
  data: string;
}

/**
 * A progress note (`RunReporter`) as a log message: the program's console lines at `info`, calls
 * at `debug` (a call that failed or was denied at `warning`), a pause at `notice`.
 *
 * @example
 * runLogMessage("console: found 3"); // { level: "info", logger: "console", data: "found 3" }
 */
export function runLogMessage(note: string): RunLogMessage {
  if (note.startsWith("console: ")) return { level: "info", logger: "console", data: note.slice("console: ".length) };
  if (note.startsWith("paused: ")) return { level: "notice", logger: "codemode", data: note };
  if (note.startsWith("call ended: ") && /, (error|denied)\)$/.test(note))
    return { level: "warning", logger: "codemode", data: note };
  return { level: "debug", logger: "codemode", data: note };
}
