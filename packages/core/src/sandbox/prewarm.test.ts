import { describe, expect, it } from "vitest";
import type { HostReply, PassRequest } from "./executor.js";
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
      const first = await executor.runPass(
        request("globalThis.leaked = 'secret'; Object.prototype.poisoned = true; await tools.ping({}); typeof leaked"),
      );
      expect(first).toMatchObject({ status: "returned", value: '"string"' });
      for (let index = 0; index < 4; index++) {
        const next = await executor.runPass(
          request("[typeof leaked, ({}).poisoned === undefined, await tools.ping({})]"),
        );
        expect(next).toMatchObject({ status: "returned", value: '["undefined",true,1]' });
      }
    } finally {
      await executor.close();
    }
  });

  it("R-SB-3: a pass on a prewarmed isolate keeps its limits, and a pass asking another heap size gets a fresh isolate", async () => {
    const executor = createIsolatedVmExecutor({ prewarm: 1, memoryMb: 64 });
    try {
      const loop = await executor.runPass({ ...request("while (true) {}"), timeoutMs: 300 });
      expect(loop).toMatchObject({ status: "failed", code: "TIMEOUT" });
      const bomb = await executor.runPass({
        ...request("const keep = []; while (true) keep.push(new Array(1e6).fill(7));"),
        memoryMb: 16,
      });
      expect(bomb).toMatchObject({ status: "failed", code: "MEMORY_LIMIT" });
      expect(await executor.runPass(request("6 * 7"))).toMatchObject({ status: "returned", value: "42" });
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
