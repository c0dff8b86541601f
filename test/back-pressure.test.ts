/**
 * R-SB-3 under load: `maxPassesInFlight` queues passes beyond the limit instead of starting them,
 * so a process given more work than it can hold slows down and never aborts. The sustained-load
 * bounds themselves (RSS, timer lag, isolates disposed at once) are held by test/load/run.ts.
 */

import { type CodemodeRuntime, createCodemodeRuntime, defineConnector, type Outcome } from "@codemode/core";
import { createIsolatedVmExecutor } from "@codemode/core/sandbox";
import { CODEMODE_ATTRIBUTES } from "@codemode/core/telemetry";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { afterEach, describe, expect, it } from "vitest";

let runtime: CodemodeRuntime | undefined;
afterEach(async () => {
  await runtime?.close();
  runtime = undefined;
});

/** A connector whose every call reads the runtime's load, so the test sees the passes from inside them. */
function probe(read: () => CodemodeRuntime) {
  const seen = { maxInFlight: 0, maxQueued: 0 };
  const connector = defineConnector({
    name: "probe",
    tools: {
      look: {
        readOnly: true,
        execute: async (args: { n: number }) => {
          const load = read().load();
          seen.maxInFlight = Math.max(seen.maxInFlight, load.passesInFlight);
          seen.maxQueued = Math.max(seen.maxQueued, load.passesQueued);
          // Give the other passes time to pile up behind this one.
          await new Promise((resolve) => setTimeout(resolve, 1));
          return args.n * 2;
        },
      },
    },
  });
  return { connector, seen };
}

describe("back-pressure: maxPassesInFlight", () => {
  it("R-SB-3: 1,000 executions submitted at once all complete, never more than 4 passes running at once", {
    timeout: 120_000,
  }, async () => {
    const { connector, seen } = probe(() => runtime!);
    const executor = createIsolatedVmExecutor();
    let running = 0;
    let maxRunning = 0;
    runtime = createCodemodeRuntime({
      connectors: [connector],
      maxPassesInFlight: 4,
      maxExecutions: 1_000,
      executor: {
        async runPass(request) {
          running++;
          maxRunning = Math.max(maxRunning, running);
          try {
            return await executor.runPass(request);
          } finally {
            running--;
          }
        },
        close: () => executor.close(),
      },
    });
    const outcomes: Outcome[] = await Promise.all(
      Array.from({ length: 1_000 }, (_, n) => runtime!.execute({ code: `async () => probe.look({ n: ${n} })` })),
    );

    expect(outcomes.filter((outcome) => outcome.status !== "completed")).toEqual([]);
    expect(outcomes.map((outcome) => (outcome.status === "completed" ? outcome.result : undefined))).toEqual(
      Array.from({ length: 1_000 }, (_, n) => n * 2),
    );
    // The executor never saw more than the limit; the limit was reached, and the rest waited.
    expect(maxRunning).toBe(4);
    expect(seen.maxInFlight).toBe(4);
    expect(seen.maxQueued).toBeGreaterThan(900);
    const after = runtime.load();
    expect(after).toMatchObject({ passesInFlight: 0, passesQueued: 0, maxPassesInFlight: 4, oldestQueuedMs: 0 });
    expect(after.queuedPassesTotal).toBeGreaterThanOrEqual(990);
    expect(after.queuedMsTotal).toBeGreaterThan(0);
  });

  it("R-SB-3: with the default executor, a pass that waits for its place counts its wait in the pass span, and a queued pass's timeout starts when it runs", async () => {
    const exporter = new InMemorySpanExporter();
    const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }).getTracer(
      "back-pressure",
    );
    const hold = (ms: number) => new Promise((resolve) => setTimeout(() => resolve(ms), ms));
    const slow = defineConnector({
      name: "slow",
      tools: { wait: { readOnly: true, execute: async (args: { ms: number }) => hold(args.ms) } },
    });
    runtime = createCodemodeRuntime({
      connectors: [slow],
      maxPassesInFlight: 1,
      limits: { timeoutMs: 1_000 },
      telemetry: { tracer },
    });

    const first = runtime.execute({ code: "async () => slow.wait({ ms: 700 })" });
    const second = runtime.execute({ code: "async () => slow.wait({ ms: 500 })" });
    await expect.poll(() => runtime!.load().passesQueued).toBe(1);
    expect(runtime.load()).toMatchObject({ passesInFlight: 1, passesQueued: 1, maxPassesInFlight: 1 });
    await hold(100);
    expect(runtime.load().oldestQueuedMs).toBeGreaterThanOrEqual(50);
    // The second runs 500 ms after waiting about 700: past its 1 s limit counted from its
    // submission, within it counted from its start.
    expect(await first).toMatchObject({ status: "completed", result: 700 });
    expect(await second).toMatchObject({ status: "completed", result: 500 });

    const passes = exporter.getFinishedSpans().filter((span) => span.name === "codemode.pass");
    const queued = passes
      .map((span) => span.attributes[CODEMODE_ATTRIBUTES.passQueuedMs])
      .sort((a, b) => Number(a) - Number(b));
    expect(queued[0]).toBe(0);
    expect(Number(queued[1])).toBeGreaterThanOrEqual(500);
    expect(passes.map((span) => span.attributes[CODEMODE_ATTRIBUTES.passQueueLength]).sort()).toEqual([0, 0]);
  });

  it("R-RT-1: maxPassesInFlight must be a whole number of at least 1", () => {
    for (const bad of [0, -1, 1.5, Number.NaN, "4"]) {
      expect(() => createCodemodeRuntime({ maxPassesInFlight: bad as number })).toThrow(
        /maxPassesInFlight must be a whole number of at least 1/,
      );
    }
  });

  it("R-SB-3: the default limit follows the heap limit: a smaller memoryMb lets more passes run at once", () => {
    runtime = createCodemodeRuntime({ limits: { memoryMb: 512 } });
    const large = runtime.load().maxPassesInFlight;
    const small = createCodemodeRuntime({ limits: { memoryMb: 32 } });
    expect(small.load().maxPassesInFlight).toBeGreaterThanOrEqual(large);
    expect(large).toBeGreaterThanOrEqual(4);
    expect(small.load().maxPassesInFlight).toBeLessThanOrEqual(256);
    return small.close();
  });
});
