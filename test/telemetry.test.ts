import { AsyncLocalStorage } from "node:async_hooks";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { type CodemodeRuntime, createCodemodeRuntime, defineConnector } from "@codemode/core";
import { CODEMODE_ATTRIBUTES, CODEMODE_EVENTS, type TelemetryOptions } from "@codemode/core/telemetry";
import { type Context, type ContextManager, context, ROOT_CONTEXT, trace } from "@opentelemetry/api";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { afterEach, describe, expect, it } from "vitest";

/** OpenTelemetry: spans for operation → pass → call, events for decisions, no values unless asked. */

const PROGRAM = `async () => {
  const open = await tickets.list({ status: "open" });
  const created = await tickets.create({ title: "Refund for " + open[0].customer });
  return created.id;
}`;

function ticketsConnector() {
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

function tracing() {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  return { exporter, provider, tracer: provider.getTracer("telemetry-test") };
}

/** Three orders at once: each pauses, and the program says what became of each. */
const BATCH = `async () => {
  const results = await Promise.allSettled(["a", "b", "c"].map((title) => tickets.create({ title })));
  return results.map((result) => (result.status === "fulfilled" ? result.value.title : "denied"));
}`;

/** A decision event as the tests compare it: which event, which action, who decided. */
const decisionEvent = (event: ReadableSpan["events"][number]) => [
  event.name,
  event.attributes?.["codemode.call.seq"],
  event.attributes?.["codemode.call.connector"],
  event.attributes?.["codemode.call.method"],
  event.attributes?.["codemode.decision.by"],
];

const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;
const named = (spans: ReadableSpan[], name: string) => spans.filter((span) => span.name === name);

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

  it("joins the application's active trace (an agent framework's tool-call span)", async () => {
    // A context manager as an SDK registers one (AsyncLocalStorage), so `context.active()` follows awaits.
    const storage = new AsyncLocalStorage<Context>();
    const manager: ContextManager = {
      active: () => storage.getStore() ?? ROOT_CONTEXT,
      with: (ctx, fn, thisArg, ...args) => storage.run(ctx, () => fn.call(thisArg, ...args)),
      bind: (_ctx, target) => target,
      enable() {
        return this;
      },
      disable() {
        return this;
      },
    };
    context.setGlobalContextManager(manager);
    try {
      const { exporter, tracer } = tracing();
      runtime = createCodemodeRuntime({ connectors: [ticketsConnector()], telemetry: { tracer } });
      const toolCall = tracer.startSpan("ai.toolCall");
      await context.with(trace.setSpan(ROOT_CONTEXT, toolCall), () => runtime!.execute({ code: PROGRAM }));
      toolCall.end();
      const [execute] = named(exporter.getFinishedSpans(), "codemode.execute");
      expect(parentOf(execute!)).toBe(toolCall.spanContext().spanId);
      expect(execute!.spanContext().traceId).toBe(toolCall.spanContext().traceId);
    } finally {
      context.disable();
    }
  });

  it("the root entry never loads @opentelemetry/api without the option (a process where it cannot be resolved)", () => {
    const core = new URL("../packages/core/dist/index.js", import.meta.url).href;
    // A resolve hook that makes the package missing, as in an application that never installed it.
    const hook = `import { registerHooks } from "node:module";
registerHooks({ resolve(specifier, context, next) { if (specifier.startsWith("@opentelemetry/")) throw new Error("not installed: " + specifier); return next(specifier, context); } });`;
    const script = `
const { createCodemodeRuntime, defineConnector } = await import(${JSON.stringify(core)});
const runtime = createCodemodeRuntime({ connectors: [defineConnector({ name: "tickets", tools: { list: { execute: async () => [1, 2] } } })] });
const outcome = await runtime.execute({ code: "async () => (await tickets.list({})).length" });
await runtime.close();
console.log(JSON.stringify(outcome.status === "completed" ? outcome.result : outcome));`;
    const child = spawnSync(
      process.execPath,
      ["--import", `data:text/javascript,${encodeURIComponent(hook)}`, "--input-type=module", "-e", script],
      {
        encoding: "utf8",
        cwd: fileURLToPath(new URL("..", import.meta.url)),
        timeout: 60_000,
      },
    );
    expect(child.stderr).not.toContain("not installed");
    expect(child.stdout.trim()).toBe("2");
  });
  it("hardening (finding 12): a step's name is cut short without recordValues, whole with it, live and replayed", async () => {
    const name = "alice@example.com ordered 3 lamps for 12 Main St";
    const code = `async () => { const stamp = await codemode.step(${JSON.stringify(name)}, () => 1); await tickets.create({ title: "x" + stamp }); return stamp; }`;
    const cut = tracing();
    runtime = createCodemodeRuntime({ connectors: [ticketsConnector()], telemetry: { tracer: cut.tracer } });
    const paused = await runtime.execute({ code });
    await runtime.approve({ executionId: paused.executionId });
    const cutNames = cut.exporter
      .getFinishedSpans()
      .flatMap((span) =>
        span.attributes[CODEMODE_ATTRIBUTES.stepName] === undefined
          ? []
          : [span.attributes[CODEMODE_ATTRIBUTES.stepName]],
      );
    // One live span on the first pass, one replayed on the second.
    expect(cutNames).toEqual(["alice@example.com order…", "alice@example.com order…"]);
    await runtime.close();

    const whole = tracing();
    runtime = createCodemodeRuntime({
      connectors: [ticketsConnector()],
      telemetry: { tracer: whole.tracer, recordValues: true },
    });
    await runtime.execute({ code });
    expect(
      whole.exporter
        .getFinishedSpans()
        .map((span) => span.attributes[CODEMODE_ATTRIBUTES.stepName])
        .filter(Boolean),
    ).toEqual([name]);
  });
});
