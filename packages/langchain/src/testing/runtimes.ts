// Runtimes for one test file, each closed after the test that opened it, so no sandbox outlives
// its test. ai-sdk/src/testing/runtimes.ts is its twin, kept apart: the adapters share no test code.
import { type CodemodeRuntime, type ConnectorDefinition, createCodemodeRuntime } from "@codemode/core";
import { afterEach } from "vitest";

/**
 * Call once at a test file's top level: it registers the `afterEach` that closes the runtimes, and
 * returns `runtimeWith`, which opens a runtime over `connectors` with a 10 s time limit.
 *
 * @example
 * const runtimeWith = runtimesClosedAfterEach();
 * it("runs", async () => { const runtime = runtimeWith(weather); … });
 */
export function runtimesClosedAfterEach(): (...connectors: ConnectorDefinition[]) => CodemodeRuntime {
  const open: CodemodeRuntime[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((runtime) => runtime.close()));
  });
  return (...connectors) => {
    const runtime = createCodemodeRuntime({ connectors, limits: { timeoutMs: 10_000 } });
    open.push(runtime);
    return runtime;
  };
}
