// @codemode/core/telemetry: the names of the spans, events and attributes the runtime emits with
// `createCodemodeRuntime({ telemetry })`, and the option's types. See docs/operating.md.
export { CODEMODE_ATTRIBUTES, CODEMODE_EVENTS, CODEMODE_SPANS } from "./attributes.js";
export type { TelemetryAttributeValue, TelemetryOptions, TelemetrySpan, TelemetryTracer } from "./telemetry-options.js";
