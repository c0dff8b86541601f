/**
 * OpenTelemetry on batched pauses (R-AP-8, R-AP-9): a decide has its own span with an event per
 * decided action, values only with recordValues, and approve without a seq an event per approved
 * action.
 */
import { type CodemodeRuntime, createCodemodeRuntime } from "@codemode/core";
import { CODEMODE_EVENTS } from "@codemode/core/telemetry";
import type { ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { afterEach, describe, expect, it } from "vitest";
import { BATCH, decisionEvent, named, parentOf, ticketsConnector, tracing } from "./telemetry-fixtures.ts";

let runtime: CodemodeRuntime | undefined;
afterEach(async () => {
  await runtime?.close();
  runtime = undefined;
});

describe("telemetry", () => {
  it("R-AP-9: a decide on a batched pause has its own span with an event per decided action (approve, edit, deny), and no values by default", async () => {
    const { exporter, tracer } = tracing();
    runtime = createCodemodeRuntime({ connectors: [ticketsConnector()], telemetry: { tracer } });
    const paused = await runtime.execute({ code: BATCH });
    expect(paused).toMatchObject({ status: "paused", pending: [{ seq: 0 }, { seq: 1 }, { seq: 2 }] });
    const decided = await runtime.decide({
      executionId: paused.executionId,
      by: "dana",
      reason: "customer called",
      decisions: [
        { seq: 0, decision: "approve" },
        { seq: 1, decision: "edit", args: { title: "Refund for bob@example.com" } },
        { seq: 2, decision: "deny" },
      ],
    });
    expect(decided).toMatchObject({ status: "completed", result: ["a", "Refund for bob@example.com", "denied"] });

    const spans = exporter.getFinishedSpans();
    const [decide] = named(spans, "codemode.decide");
    expect(decide?.attributes).toMatchObject({
      "codemode.operation": "decide",
      "codemode.execution.id": paused.executionId,
      "codemode.outcome.status": "completed",
    });
    expect(parentOf(named(spans, "codemode.pass")[1]!)).toBe(decide!.spanContext().spanId);
    expect(decide!.events.map(decisionEvent)).toEqual([
      [CODEMODE_EVENTS.approve, 0, "tickets", "create", "dana"],
      ["codemode.edit", 1, "tickets", "create", "dana"],
      ["codemode.deny", 2, "tickets", "create", "dana"],
    ]);
    const everything = JSON.stringify(spans.map((span) => [span.attributes, span.events, span.status]));
    expect(everything).not.toContain("bob@example.com");
    expect(everything).not.toContain("customer called");
  });

  it("R-AP-9: with recordValues an edit event carries the edited arguments, and every decision its reason", async () => {
    const { exporter, tracer } = tracing();
    runtime = createCodemodeRuntime({ connectors: [ticketsConnector()], telemetry: { tracer, recordValues: true } });
    const paused = await runtime.execute({ code: BATCH });
    await runtime.decide({
      executionId: paused.executionId,
      reason: "customer called",
      decisions: [
        { seq: 0, decision: "approve" },
        { seq: 1, decision: "edit", args: { title: "Refund for bob@example.com" }, reason: "typo" },
        { seq: 2, decision: "deny" },
      ],
    });
    const [decide] = named(exporter.getFinishedSpans(), "codemode.decide");
    expect(
      decide?.events.map((event) => [
        event.name,
        event.attributes?.["codemode.decision.reason"],
        event.attributes?.["codemode.call.arguments"],
      ]),
    ).toEqual([
      [CODEMODE_EVENTS.approve, "customer called", undefined],
      ["codemode.edit", "typo", JSON.stringify({ title: "Refund for bob@example.com" })],
      ["codemode.deny", "customer called", undefined],
    ]);
  });

  it("R-AP-8: approve without a seq has an event per approved action; a later decide does not report an earlier denial; a refused decide has none", async () => {
    const { exporter, tracer } = tracing();
    runtime = createCodemodeRuntime({ connectors: [ticketsConnector()], telemetry: { tracer } });
    const code = `async () => {
      const settled = (titles) => Promise.allSettled(titles.map((title) => tickets.create({ title })));
      const first = await settled(["a", "b"]);
      const second = await settled(["c", "d"]);
      const third = await Promise.all([tickets.create({ title: "e" }), tickets.create({ title: "f" })]);
      return [first.map((result) => result.status), second.map((result) => result.status), third.map((ticket) => ticket.title)];
    }`;
    const paused = await runtime.execute({ code });
    const executionId = paused.executionId;
    expect(paused).toMatchObject({ status: "paused", pending: [{ seq: 0 }, { seq: 1 }] });
    const second = await runtime.decide({
      executionId,
      by: "sam",
      decisions: [
        { seq: 0, decision: "deny" },
        { seq: 1, decision: "approve" },
      ],
    });
    expect(second).toMatchObject({ status: "paused", pending: [{ seq: 2 }, { seq: 3 }] });
    const stale = await runtime.decide({ executionId, decisions: [{ seq: 0, decision: "approve" }] });
    expect(stale).toMatchObject({ status: "error", code: "NOT_PAUSED" });
    const third = await runtime.decide({
      executionId,
      by: "kim",
      decisions: [
        { seq: 3, decision: "deny" },
        { seq: 2, decision: "approve" },
      ],
    });
    expect(third).toMatchObject({ status: "paused", pending: [{ seq: 4 }, { seq: 5 }] });
    const done = await runtime.approve({ executionId, by: "dana" });
    expect(done).toMatchObject({
      status: "completed",
      result: [
        ["rejected", "fulfilled"],
        ["fulfilled", "rejected"],
        ["e", "f"],
      ],
    });

    const spans = exporter.getFinishedSpans();
    const decisionsOn = (span: ReadableSpan | undefined) =>
      span?.events.filter((event) => event.name !== CODEMODE_EVENTS.pause).map(decisionEvent);
    const [first, refused, later] = named(spans, "codemode.decide");
    expect(first?.events.map(decisionEvent)).toEqual([
      ["codemode.deny", 0, "tickets", "create", "sam"],
      [CODEMODE_EVENTS.approve, 1, "tickets", "create", "sam"],
      // Its pass went on to the next batch, and paused there.
      [CODEMODE_EVENTS.pause, 2, "tickets", "create", undefined],
      [CODEMODE_EVENTS.pause, 3, "tickets", "create", undefined],
    ]);
    expect(refused?.status).toEqual({ code: 2, message: "NOT_PAUSED" });
    expect(refused?.events).toEqual([]);
    // The denial of seq 0 is in the log these passes start from too; it was the first decide's.
    expect(decisionsOn(later)).toEqual([
      [CODEMODE_EVENTS.approve, 2, "tickets", "create", "kim"],
      ["codemode.deny", 3, "tickets", "create", "kim"],
    ]);
    expect(decisionsOn(named(spans, "codemode.approve")[0])).toEqual([
      [CODEMODE_EVENTS.approve, 4, "tickets", "create", "dana"],
      [CODEMODE_EVENTS.approve, 5, "tickets", "create", "dana"],
    ]);
  });
});
