/** A span attribute value as the runtime sets them. */
export type TelemetryAttributeValue = string | number | boolean;

/**
 * The part of an OpenTelemetry `Span` the runtime uses. Declared here, not imported, so the
 * declarations of `@codemode/core` never name `@opentelemetry/api` (an optional peer).
 */
export interface TelemetrySpan {
  setAttribute(key: string, value: TelemetryAttributeValue): unknown;
  addEvent(name: string, attributes?: Record<string, TelemetryAttributeValue>): unknown;
  setStatus(status: { code: number; message?: string }): unknown;
  end(): void;
}

/** The part of an OpenTelemetry `Tracer` the runtime uses; `trace.getTracer(name)` fits. */
export interface TelemetryTracer {
  startSpan(
    name: string,
    options?: { attributes?: Record<string, TelemetryAttributeValue>; startTime?: number },
    context?: unknown,
  ): TelemetrySpan;
}

/**
 * OpenTelemetry for a runtime (`createCodemodeRuntime({ telemetry: {} })`). Without this option
 * the runtime never loads `@opentelemetry/api`; with it, the API is imported on first use.
 *
 * @example
 * import { trace } from "@opentelemetry/api";
 * const runtime = createCodemodeRuntime({ connectors, telemetry: { tracer: trace.getTracer("support-agent") } });
 */
export interface TelemetryOptions {
  /**
   * The tracer spans start on. Default: `trace.getTracer("@codemode/core")` of
   * `@opentelemetry/api`, i.e. the tracer provider the application registered.
   */
  tracer?: TelemetryTracer;
  /**
   * Also put values into attributes: each call's arguments, result or error message, the
   * program's code, its result and its error message. Default false: they can hold personal
   * data or secrets, and a trace backend is seldom the place for them. Spans carry names,
   * sequence numbers, states, decisions, codes and counts either way.
   */
  recordValues?: boolean;
}
