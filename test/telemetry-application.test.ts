/**
 * OpenTelemetry from the application's side: the spans join its active trace (an agent
 * framework's tool-call span), the root entry never loads @opentelemetry/api without the option,
 * and a step's name is cut short in spans unless recordValues asks for values.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { type CodemodeRuntime, createCodemodeRuntime } from "@codemode/core";
import { CODEMODE_ATTRIBUTES } from "@codemode/core/telemetry";
import { type Context, type ContextManager, context, ROOT_CONTEXT, trace } from "@opentelemetry/api";
import { afterEach, describe, expect, it } from "vitest";
import { named, PROGRAM, parentOf, ticketsConnector, tracing } from "./telemetry-fixtures.ts";

let runtime: CodemodeRuntime | undefined;
afterEach(async () => {
  await runtime?.close();
  runtime = undefined;
});

describe("telemetry", () => {
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
