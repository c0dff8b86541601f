import type { Telemetry } from "./interface.js";
import { LiveTelemetry } from "./live-telemetry.js";
import type { TelemetryOptions } from "./telemetry-options.js";

const OFF: Telemetry = {
  enabled: false,
  recordValues: false,
  operation: (_name, _attributes, run) => run(),
  pass: (_head, _log, run) => run(),
  passAdmitted: () => undefined,
  observeRequests: (_head, _log, handler) => handler,
};

/** The runtime's telemetry: off (no import of `@opentelemetry/api`) unless options are given. */
export function createTelemetry(
  options: TelemetryOptions | undefined,
  runtimeName: string,
  warn: (message: string) => void,
): Telemetry {
  if (options === undefined) return OFF;
  return new LiveTelemetry(options, runtimeName, warn);
}

/** Problems with the option, for the runtime's creation-time check. */
export function telemetryProblems(options: unknown): string[] {
  if (options === undefined) return [];
  if (typeof options !== "object" || options === null)
    return ["telemetry must be an object ({ tracer?, recordValues? })"];
  const { tracer, recordValues } = options as { tracer?: unknown; recordValues?: unknown };
  const problems: string[] = [];
  if (tracer !== undefined && typeof (tracer as { startSpan?: unknown } | null)?.startSpan !== "function")
    problems.push("telemetry.tracer must be an OpenTelemetry Tracer");
  if (recordValues !== undefined && typeof recordValues !== "boolean")
    problems.push("telemetry.recordValues must be a boolean");
  return problems;
}
