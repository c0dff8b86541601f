import { describe, expect, it } from "vitest";
import type { HostReply, PassRequest } from "../executor.js";
import { expectFreshIsolates, expectLimitsHold } from "../pass-fixtures.js";
import { createIsolatedVmExecutor } from "./isolated-vm-executor.js";

const echo = async (): Promise<HostReply> => ({ kind: "value", value: "1" });
const request = (code: string): PassRequest => ({
  code,
  connectors: { tools: ["ping"] },
  onRequest: echo,
  timeoutMs: 2_000,
});

describe("prewarmed isolates", () => {
  it("R-SB-1: a prewarmed isolate serves one pass only: nothing a program leaves behind reaches the next", async () => {
    const executor = createIsolatedVmExecutor({ prewarm: 2 });
    try {
      await expectFreshIsolates(executor, request, 4);
    } finally {
      await executor.close();
    }
  });

  it("R-SB-3: a pass on a prewarmed isolate keeps its limits, and a pass asking another heap size gets a fresh isolate", async () => {
    const executor = createIsolatedVmExecutor({ prewarm: 1, memoryMb: 64 });
    try {
      await expectLimitsHold(executor, request);
    } finally {
      await executor.close();
    }
  });

  it("close() disposes the isolates kept ready, and a closed executor still answers with a fresh isolate", async () => {
    const executor = createIsolatedVmExecutor({ prewarm: 3 });
    await executor.close();
    expect(await executor.runPass(request("'after close'"))).toMatchObject({
      status: "returned",
      value: '"after close"',
    });
    await executor.close();
  });
});
