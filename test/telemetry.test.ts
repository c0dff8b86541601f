/**
 * OpenTelemetry: spans for operation → pass → call, events for decisions, no values unless asked.
 * Batched pauses are in telemetry-decisions.test.ts, the application's side in
 * telemetry-application.test.ts.
 */
import { type CodemodeRuntime, createCodemodeRuntime } from "@codemode/core";
import { CODEMODE_ATTRIBUTES, CODEMODE_EVENTS, type TelemetryOptions } from "@codemode/core/telemetry";
import type { ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { afterEach, describe, expect, it } from "vitest";
import { named, PROGRAM, parentOf, ticketsConnector, tracing } from "./telemetry-fixtures.ts";

let runtime: CodemodeRuntime | undefined;
afterEach(async () => {
  await runtime?.close();
  runtime = undefined;
});

describe("telemetry", () => {
  it("a paused-then-approved execution: execute → pass 1 → calls, then approve → pass 2 → replayed and approved calls, with pause and approve events", async () => {
    const { exporter, tracer } = tracing();
    // The option's structural type takes an OpenTelemetry Tracer as it is.
    const telemetry: TelemetryOptions = { tracer };
    runtime = createCodemodeRuntime({ connectors: [ticketsConnector()], telemetry });

    const paused = await runtime.execute({ code: PROGRAM });
    expect(paused.status).toBe("paused");
    const approved = await runtime.approve({ executionId: paused.executionId, by: "dana", reason: "customer called" });
    expect(approved).toMatchObject({ status: "completed", result: 42 });

    const spans = exporter.getFinishedSpans();
    const [execute] = named(spans, "codemode.execute");
    const [approve] = named(spans, "codemode.approve");
    expect(execute && approve).toBeTruthy();
    // Two traces (the approval came later), joined by the execution id on every span.
    for (const span of spans) expect(span.attributes[CODEMODE_ATTRIBUTES.executionId]).toBe(paused.executionId);
    expect(execute!.attributes).toMatchObject({
      "codemode.operation": "execute",
      "codemode.outcome.status": "paused",
      "codemode.runtime.name": "default",
    });
    expect(approve!.attributes).toMatchObject({
      "codemode.operation": "approve",
      "codemode.outcome.status": "completed",
    });

    const passes = named(spans, "codemode.pass");
    expect(
      passes.map((pass) => [pass.attributes["codemode.pass.number"], pass.attributes["codemode.pass.end"]]),
    ).toEqual([
      [1, "paused"],
      [2, "completed"],
    ]);
    const [first, second] = passes as [ReadableSpan, ReadableSpan];
    expect(parentOf(first)).toBe(execute!.spanContext().spanId);
    expect(parentOf(second)).toBe(approve!.spanContext().spanId);

    const callsOf = (pass: ReadableSpan) =>
      spans
        .filter((span) => parentOf(span) === pass.spanContext().spanId)
        .sort((a, b) => Number(a.attributes["codemode.call.seq"]) - Number(b.attributes["codemode.call.seq"]))
        .map((span) => [
          span.name,
          span.attributes["codemode.call.seq"],
          span.attributes["codemode.call.decision"],
          span.attributes["codemode.call.state"],
          span.attributes["codemode.call.replayed"],
        ]);
    expect(callsOf(first)).toEqual([
      ["codemode.call tickets.list", 0, "execute", "applied", false],
      ["codemode.call tickets.create", 1, "pause", "pending", false],
    ]);
    expect(callsOf(second)).toEqual([
      ["codemode.call tickets.list", 0, "replay", "applied", true],
      ["codemode.call tickets.create", 1, "execute", "applied", false],
    ]);
    const approvedCall = spans.find(
      (span) => span.name === "codemode.call tickets.create" && span.attributes["codemode.call.decision"] === "execute",
    );
    expect(approvedCall?.attributes["codemode.call.approved"]).toBe(true);

    // Events: the pause on the first pass and its operation, the approval (who, which call) on the approve span.
    expect(first.events.map((event) => event.name)).toEqual([CODEMODE_EVENTS.pause]);
    expect(execute!.events.map((event) => [event.name, event.attributes?.["codemode.call.seq"]])).toEqual([
      [CODEMODE_EVENTS.pause, 1],
    ]);
    expect(
      approve!.events.map((event) => [
        event.name,
        event.attributes?.["codemode.decision.by"],
        event.attributes?.["codemode.call.method"],
      ]),
    ).toEqual([[CODEMODE_EVENTS.approve, "dana", "create"]]);

    // No values by default: no arguments, results, code, reason or the customer's address anywhere.
    const everything = JSON.stringify(spans.map((span) => [span.attributes, span.events, span.status]));
    expect(everything).not.toContain("alice@example.com");
    expect(everything).not.toContain("customer called");
    expect(everything).not.toContain("codemode.call.arguments");
  });

  it("recordValues: true puts arguments, results and the code into attributes", async () => {
    const { exporter, tracer } = tracing();
    runtime = createCodemodeRuntime({ connectors: [ticketsConnector()], telemetry: { tracer, recordValues: true } });
    const paused = await runtime.execute({ code: PROGRAM });
    await runtime.approve({ executionId: paused.executionId, reason: "customer called" });
    const spans = exporter.getFinishedSpans();
    const create = spans.find(
      (span) => span.name === "codemode.call tickets.create" && span.attributes["codemode.call.decision"] === "execute",
    );
    expect(JSON.parse(String(create?.attributes["codemode.call.arguments"]))).toEqual({
      title: "Refund for alice@example.com",
    });
    expect(JSON.parse(String(create?.attributes["codemode.call.result"]))).toMatchObject({ id: 42 });
    expect(named(spans, "codemode.execute")[0]?.attributes["codemode.code"]).toBe(PROGRAM);
    expect(named(spans, "codemode.approve")[0]?.events[0]?.attributes?.["codemode.decision.reason"]).toBe(
      "customer called",
    );
  });

  it("reject and rollback are spans with their events; errors set the span status", async () => {
    const { exporter, tracer } = tracing();
    runtime = createCodemodeRuntime({ connectors: [ticketsConnector()], telemetry: { tracer } });
    const first = await runtime.execute({ code: PROGRAM });
    expect(await runtime.reject({ executionId: first.executionId, seq: 1, by: "sam" })).toBe(true);
    const second = await runtime.execute({ code: PROGRAM });
    await runtime.approve({ executionId: second.executionId });
    await runtime.rollback({ executionId: second.executionId });
    const failed = await runtime.approve({ executionId: second.executionId });
    expect(failed).toMatchObject({ status: "error", code: "NOT_PAUSED" });

    const spans = exporter.getFinishedSpans();
    const [reject] = named(spans, "codemode.reject");
    expect(reject?.events.map((event) => [event.name, event.attributes?.["codemode.decision.by"]])).toEqual([
      [CODEMODE_EVENTS.reject, "sam"],
    ]);
    const [rollback] = named(spans, "codemode.rollback");
    expect(rollback?.events[0]).toMatchObject({
      name: CODEMODE_EVENTS.rollback,
      attributes: { "codemode.rollback.reverted": 1, "codemode.rollback.skipped": 1 },
    });
    const stale = named(spans, "codemode.approve").at(-1);
    expect(stale?.status).toEqual({ code: 2, message: "NOT_PAUSED" });
    expect(stale?.events).toEqual([]);
  });
});
