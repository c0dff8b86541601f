/**
 * What the telemetry tests share: a `tickets` connector whose `create` needs approval, the
 * programs they run (one order, three orders at once), an in-memory tracer, and readers of the
 * spans it records.
 */
import { defineConnector } from "@codemode/core";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";

/** Lists the open tickets, then opens one (needs approval) for the first customer. */
export const PROGRAM = `async () => {
  const open = await tickets.list({ status: "open" });
  const created = await tickets.create({ title: "Refund for " + open[0].customer });
  return created.id;
}`;

/** `tickets.list` (reads) and `tickets.create` (needs approval, can be reverted). */
export function ticketsConnector() {
  return defineConnector({
    name: "tickets",
    tools: {
      list: { execute: async () => [{ id: 1, customer: "alice@example.com" }] },
      create: {
        requiresApproval: true,
        execute: async (args: { title: string }) => ({ id: 42, title: args.title }),
        revert: async () => undefined,
      },
    },
  });
}

/** A tracer whose finished spans stay in memory, in `exporter`. */
export function tracing() {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  return { exporter, provider, tracer: provider.getTracer("telemetry-test") };
}

/** Three orders at once: each pauses, and the program says what became of each. */
export const BATCH = `async () => {
  const results = await Promise.allSettled(["a", "b", "c"].map((title) => tickets.create({ title })));
  return results.map((result) => (result.status === "fulfilled" ? result.value.title : "denied"));
}`;

/** A decision event as the tests compare it: which event, which action, who decided. */
export const decisionEvent = (event: ReadableSpan["events"][number]) => [
  event.name,
  event.attributes?.["codemode.call.seq"],
  event.attributes?.["codemode.call.connector"],
  event.attributes?.["codemode.call.method"],
  event.attributes?.["codemode.decision.by"],
];

/** The span id of a span's parent. */
export const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;
/** The spans of one name. */
export const named = (spans: ReadableSpan[], name: string) => spans.filter((span) => span.name === name);
