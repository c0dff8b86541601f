// Runtimes for one test file, each closed after the test that opened it, so no sandbox outlives
// its test. langchain/src/testing/runtimes.ts is its twin, kept apart: the adapters share no test code.
import { type CodemodeRuntime, type Connector, createCodemodeRuntime } from "@codemode/core";
import { afterEach } from "vitest";
import { createShop, type Shop } from "./shop.js";

export interface TestRuntimes {
  /** `createShop(storage, options)`, closed after the test. */
  shop(...args: Parameters<typeof createShop>): Shop;
  /** A runtime over `connectors` with a 10 s time limit, closed after the test. */
  runtimeWith(...connectors: Connector[]): CodemodeRuntime;
  /** Closes `runtime` after the test, and returns it. */
  closeAfterTest(runtime: CodemodeRuntime): CodemodeRuntime;
}

/**
 * Call once at a test file's top level: it registers the `afterEach` that closes the runtimes.
 *
 * @example
 * const { shop } = runtimesClosedAfterEach();
 * it("orders", async () => { const { runtime, orders } = shop(); … });
 */
export function runtimesClosedAfterEach(): TestRuntimes {
  const open: CodemodeRuntime[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((runtime) => runtime.close()));
  });
  const closeAfterTest = (runtime: CodemodeRuntime) => {
    open.push(runtime);
    return runtime;
  };
  return {
    shop: (...args) => {
      const created = createShop(...args);
      closeAfterTest(created.runtime);
      return created;
    },
    runtimeWith: (...connectors) =>
      closeAfterTest(createCodemodeRuntime({ connectors, limits: { timeoutMs: 10_000 } })),
    closeAfterTest,
  };
}
