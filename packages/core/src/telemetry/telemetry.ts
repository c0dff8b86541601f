import type { ExecutionHead, StoredEntry } from "../log/execution-store.js";
import type { PassEnd } from "../runtime/pass/run-pass.js";
import type { HostReply, SandboxRequest } from "../sandbox/executor.js";
import { LiveTelemetry } from "./live-telemetry.js";
import type { TelemetryAttributeValue, TelemetryOptions } from "./telemetry-options.js";

export type Attributes = Record<string, TelemetryAttributeValue>;
export type RequestHandler = (request: SandboxRequest) => Promise<HostReply>;

/** What an operation's span lets the code that describes its result do. */
export interface OperationSpan {
  set(key: string, value: TelemetryAttributeValue): void;
  event(name: string, attributes: Attributes): void;
  /** Marks the span failed; the message goes in only when values are recorded. */
  fail(code: string, message?: string): void;
}

/**
 * The runtime's hook points for OpenTelemetry: the handle wraps its operations, a pass wraps
 * itself, and the pass's request handler is wrapped so each call gets a span. Without the
 * `telemetry` option every hook is a pass-through and `@opentelemetry/api` is never loaded.
 */
export interface Telemetry {
  readonly enabled: boolean;
  readonly recordValues: boolean;
  /** Runs one operation of the handle inside a span named `codemode.<name>`. */
  operation<T>(
    name: string,
    attributes: Attributes,
    run: () => Promise<T>,
    describe: (span: OperationSpan, result: T) => void,
  ): Promise<T>;
  /** Runs one pass inside a `codemode.pass` span, child of the operation running it. */
  pass(head: ExecutionHead, log: ReadonlyMap<number, StoredEntry>, run: () => Promise<PassEnd>): Promise<PassEnd>;
  /** The pass got its place (`maxPassesInFlight`): how long it queued, and behind how many. */
  passAdmitted(head: ExecutionHead, admission: { queuedMs: number; queueLength: number }): void;
  /** Wraps a pass's request handler: a span per connector call and step. */
  observeRequests(head: ExecutionHead, log: ReadonlyMap<number, StoredEntry>, handler: RequestHandler): RequestHandler;
}

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
