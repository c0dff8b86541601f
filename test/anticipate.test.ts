/**
 * R-SB-8: the runtime tells its executor which program a pass is about to run (`anticipate`)
 * before the work it does ahead of the pass (storing a new run, writing decisions), so that a
 * sandbox host elsewhere reads the program meanwhile. An executor without it runs as before.
 */
import { createCodemodeRuntime, defineConnector } from "@codemode/core";
import { createIsolatedVmExecutor, type Executor } from "@codemode/core/sandbox";
import Keyv from "keyv";
import { describe, expect, it } from "vitest";
import { closeKeptRuntimesAfterEach, keep } from "./runtime-fixtures.ts";

closeKeptRuntimesAfterEach();

const shop = defineConnector({
  name: "shop",
  tools: {
    price: { execute: () => 12 },
    order: { requiresApproval: true, execute: () => ({ orderId: "o-1" }) },
  },
});
const ORDER = "async () => { const price = await shop.price({}); return await shop.order({ price }); }";

/** A runtime over an in-memory store whose executor records what the runtime told it, in order. */
function recordingRuntime(withAnticipate = true) {
  const events: string[] = [];
  const inner = createIsolatedVmExecutor();
  const store = new Keyv();
  const executor: Executor = {
    runPass: (request) => {
      events.push(`runPass ${request.code}`);
      return inner.runPass(request);
    },
    close: () => inner.close(),
    ...(withAnticipate ? { anticipate: (code: string) => events.push(`anticipate ${code}`) } : {}),
  };
  const runtime = keep(createCodemodeRuntime({ connectors: [shop], storage: store, executor }));
  return { runtime, events };
}

describe("anticipate", () => {
  it("R-SB-8: execute names the program to the executor before its pass, and approve before the pass that resumes it", async () => {
    const { runtime, events } = recordingRuntime();
    const paused = await runtime.execute({ code: ORDER });
    expect(paused.status).toBe("paused");
    expect(events).toEqual([`anticipate ${ORDER}`, `runPass ${ORDER}`]);

    events.length = 0;
    const done = await runtime.approve({ executionId: paused.executionId });
    expect(done).toMatchObject({ status: "completed", result: { orderId: "o-1" } });
    expect(events).toEqual([`anticipate ${ORDER}`, `runPass ${ORDER}`]);
  });

  it("R-SB-8: a refused decision names nothing, and code that is no program is never named", async () => {
    const { runtime, events } = recordingRuntime();
    const done = await runtime.execute({ code: "async () => 1" });
    events.length = 0;
    // Not paused: nothing will run.
    expect((await runtime.approve({ executionId: done.executionId })).status).toBe("error");
    expect(await runtime.execute({ code: 42 as unknown as string })).toMatchObject({ status: "error" });
    expect(events).toEqual([]);
  });

  it("R-SB-8: an executor without anticipate runs every pass as before", async () => {
    const { runtime, events } = recordingRuntime(false);
    const paused = await runtime.execute({ code: ORDER });
    expect((await runtime.approve({ executionId: paused.executionId })).status).toBe("completed");
    expect(events).toEqual([`runPass ${ORDER}`, `runPass ${ORDER}`]);
  });
});
