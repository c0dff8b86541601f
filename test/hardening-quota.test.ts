/**
 * Issue 17.5: a per-execution write quota. A program recording in a loop (`codemode.step` with
 * 1 MB values) wrote 434 MB to the in-memory store in 5 s. Now an execution's log may hold
 * `limits.maxLogBytes` (default 128 MiB) in `limits.maxLogEntries` entries (default 10,000),
 * counted across passes; the bound asserted is the bytes the store was really asked to write.
 */
import { createCodemodeRuntime, defineConnector, type CodemodeRuntime, type CodemodeRuntimeOptions } from "@codemode/core";
import Keyv from "keyv";
import { afterEach, describe, expect, it } from "vitest";

/** A Keyv over a Map that counts the bytes of every value it is asked to write. */
function countingStore() {
  const written = { bytes: 0, writes: 0 };
  class CountingMap extends Map<string, unknown> {
    override set(key: string, value: unknown): this {
      written.writes++;
      written.bytes += Buffer.byteLength(typeof value === "string" ? value : (JSON.stringify(value) ?? ""));
      return super.set(key, value);
    }
  }
  const map = new CountingMap();
  return { keyv: new Keyv({ store: map }), map, written };
}

const MiB = 1024 * 1024;
const effects: Array<{ seq: number; size: number }> = [];
const files = defineConnector({
  name: "files",
  tools: {
    read: {
      execute: async (args: { size: number }, ctx) => {
        effects.push({ seq: ctx.seq, size: args.size });
        return "r".repeat(args.size);
      },
    },
    touch: { execute: async () => true },
    publish: { requiresApproval: true, execute: async () => ({ published: true }) },
  },
});

const runtimes: CodemodeRuntime[] = [];
afterEach(async () => {
  effects.length = 0;
  for (const runtime of runtimes.splice(0)) await runtime.close();
});

function setup(limits: CodemodeRuntimeOptions["limits"] = {}) {
  const store = countingStore();
  const runtime = createCodemodeRuntime({ connectors: [files], storage: store.keyv, limits: { timeoutMs: 30_000, ...limits } });
  runtimes.push(runtime);
  return { runtime, ...store };
}

describe("a per-execution write quota (issue 17.5)", () => {
  it("R-DV-1: codemode.step in a loop with 1 MB values ends VALUE_TOO_LARGE within the default 128 MiB", { timeout: 60_000 }, async () => {
    const { runtime, written } = setup();
    const outcome = await runtime.execute({
      code: "async () => { const blob = 'b'.repeat(999_000); for (let i = 0; ; i++) await codemode.step('s' + i, () => blob); }",
    });
    expect(outcome).toMatchObject({ status: "error", code: "VALUE_TOO_LARGE" });
    if (outcome.status === "error") expect(outcome.error).toContain("limits.maxLogBytes");
    // Every byte the store was asked to write, the final record included.
    expect(written.bytes).toBeLessThan(128 * MiB + 4 * MiB);
    expect(outcome.calls!.length).toBeLessThanOrEqual(135);
  });

  it("R-DV-1: limits.maxLogEntries bounds the entries of an execution, whatever their size", async () => {
    const { runtime } = setup({ maxLogEntries: 50 });
    const outcome = await runtime.execute({ code: "async () => { for (;;) await files.touch({}); }" });
    expect(outcome).toMatchObject({ status: "error", code: "VALUE_TOO_LARGE" });
    if (outcome.status === "error") expect(outcome.error).toContain("more than 50 entries (limits.maxLogEntries)");
    expect(outcome.calls).toHaveLength(50);
  });

  it("R-DV-1: the result of a call that already ran is recorded, and the pass ends before the next call", async () => {
    const { runtime } = setup({ maxLogBytes: MiB });
    const outcome = await runtime.execute({ code: "async () => { for (let i = 0; i < 5; i++) await files.read({ size: 600_000 }); return 'all read'; }" });
    expect(outcome).toMatchObject({ status: "error", code: "VALUE_TOO_LARGE" });
    expect(effects.map((effect) => effect.seq)).toEqual([0, 1]);
    expect(outcome.calls!.map((call) => [call.seq, call.state, typeof call.result])).toEqual([
      [0, "applied", "string"],
      [1, "applied", "string"],
    ]);
  });

  it("R-DV-1: the quota is counted across passes, with the running totals on the execution head", async () => {
    const { runtime, map } = setup({ maxLogBytes: MiB });
    const paused = await runtime.execute({
      code: "async () => { await files.read({ size: 600_000 }); await files.publish({}); await files.read({ size: 600_000 }); return 'done'; }",
    });
    expect(paused).toMatchObject({ status: "paused" });
    const head = JSON.parse(JSON.parse(map.get(`keyv:cm:default:h:${paused.executionId}`) as string).value as string) as { logBytes: number; logEntries: number };
    expect(head.logEntries).toBe(2);
    expect(head.logBytes).toBeGreaterThan(600_000);
    const approved = await runtime.approve({ executionId: paused.executionId });
    expect(approved).toMatchObject({ status: "error", code: "VALUE_TOO_LARGE" });
    expect(effects.map((effect) => effect.seq)).toEqual([0, 2]);
  });

  it("R-DV-1: an execution within its quota is not affected", async () => {
    const { runtime } = setup({ maxLogBytes: MiB, maxLogEntries: 10 });
    const outcome = await runtime.execute({ code: "async () => { for (let i = 0; i < 9; i++) await files.touch({}); return (await files.read({ size: 10 })).length; }" });
    expect(outcome).toMatchObject({ status: "completed", result: 10 });
  });

  it("limits.maxLogBytes and limits.maxLogEntries must be positive numbers", () => {
    expect(() => createCodemodeRuntime({ limits: { maxLogBytes: 0 } })).toThrow(/limits\.maxLogBytes must be a positive number/);
    expect(() => createCodemodeRuntime({ limits: { maxLogEntries: -1 } })).toThrow(/limits\.maxLogEntries must be a positive number/);
  });
});
