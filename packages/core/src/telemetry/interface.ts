import type { ExecutionHead, StoredEntry } from "../log/interface.js";
import type { PassEnd } from "../runtime/records/index.js";
import type { HostReply, SandboxRequest } from "../sandbox/executor.js";
import type { TelemetryAttributeValue } from "./telemetry-options.js";

// The runtime's telemetry as the runtime sees it: hook points that are pass-throughs when
// telemetry is off. telemetry.ts picks the implementation; live-telemetry.ts is the real one.

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
