/**
 * Durable values (R-DV-1 … R-DV-3): what the log can keep, what it refuses and says why, the
 * final result the model gets whole, and transformResult applied after recording.
 */
import {
  type CodemodeRuntime,
  createCodemodeRuntime,
  defineConnector,
  MAX_DURABLE_CHARS,
  type Outcome,
} from "@codemode/core";
import { afterEach, describe, expect, it } from "vitest";

interface Effect {
  method: string;
  seq: number;
  args: unknown;
}

function filesConnector(effects: Effect[]) {
  return defineConnector({
    name: "files",
    tools: {
      save: {
        execute: async (args: Record<string, unknown>, ctx) => {
          effects.push({ method: "save", seq: ctx.seq, args });
          return { saved: true };
        },
      },
      read_huge: {
        execute: async (args: { size: number }, ctx) => {
          effects.push({ method: "read_huge", seq: ctx.seq, args });
          return { text: "x".repeat(args.size) };
        },
      },
      open_handle: {
        execute: async (args: { path: string }, ctx) => {
          effects.push({ method: "open_handle", seq: ctx.seq, args });
          // A host object the sandbox must never see: it carries a function.
          return { path: args.path, close: () => "closed" };
        },
      },
      echo: {
        execute: async (args: { bytes: Uint8Array; big: bigint }, ctx) => {
          effects.push({ method: "echo", seq: ctx.seq, args });
          if (!(args.bytes instanceof Uint8Array))
            throw new Error(`bytes arrived as ${Object.prototype.toString.call(args.bytes)}`);
          if (typeof args.big !== "bigint") throw new Error(`big arrived as ${typeof args.big}`);
          return { bytes: Uint8Array.from([...args.bytes, 255]), big: args.big * 2n };
        },
      },
      publish: {
        requiresApproval: true,
        execute: async (args: Record<string, unknown>, ctx) => {
          effects.push({ method: "publish", seq: ctx.seq, args });
          return { published: true, id: 7n, checksum: new Uint8Array([9, 8, 7]) };
        },
      },
    },
  });
}

const LIMITS = { timeoutMs: 20_000 };
const runtimes: CodemodeRuntime[] = [];
afterEach(async () => {
  for (const runtime of runtimes.splice(0)) await runtime.close();
});

function setup(options: { transformResult?: (result: unknown) => unknown } = {}) {
  const effects: Effect[] = [];
  const runtime = createCodemodeRuntime({ connectors: [filesConnector(effects)], limits: LIMITS, ...options });
  runtimes.push(runtime);
  return { runtime, effects };
}

function expectStatus<S extends Outcome["status"]>(
  outcome: Outcome,
  status: S,
): asserts outcome is Extract<Outcome, { status: S }> {
  if (outcome.status !== status)
    throw new Error(
      `expected ${status}, got ${JSON.stringify(outcome, (_, v) => (typeof v === "bigint" ? `${v}n` : v)).slice(0, 600)}`,
    );
}

/** The advice R-DV-1 asks for: keep the data elsewhere, pass a small reference. */
const ADVICE = /store the data elsewhere.*reference/;

describe("R-DV-1 values kept for replay are limited to 1,000,000 serialized characters", () => {
  it("the limit is 1,000,000", () => {
    expect(MAX_DURABLE_CHARS).toBe(1_000_000);
  });

  it("a connector argument over the limit ends VALUE_TOO_LARGE, advises a reference, and the tool never runs", async () => {
    const { runtime, effects } = setup();
    const outcome = await runtime.execute({
      code: `async () => {
        await files.save({ path: "a.txt" });
        await files.save({ path: "b.txt", content: "x".repeat(1_000_000) });
        return "saved";
      }`,
    });
    expectStatus(outcome, "error");
    expect(outcome.code).toBe("VALUE_TOO_LARGE");
    expect(outcome.error).toContain("files.save");
    expect(outcome.error).toMatch(ADVICE);
    expect(effects.map((effect) => effect.args)).toEqual([{ path: "a.txt" }]);
    const state = await runtime.execution(outcome.executionId);
    expect(state?.status).toBe("error");
    expect(state?.log.map((entry) => entry.seq)).toEqual([0]);
  });

  it("an argument of exactly 1,000,000 serialized characters is kept", async () => {
    const { runtime, effects } = setup();
    // {"c":"…"} is 8 characters around the string.
    const outcome = await runtime.execute({
      code: `async () => (await files.save({ c: "x".repeat(${MAX_DURABLE_CHARS - 8}) })).saved`,
    });
    expectStatus(outcome, "completed");
    expect(outcome.result).toBe(true);
    expect(effects).toHaveLength(1);
  });

  it("a tool result over the limit ends VALUE_TOO_LARGE, and the applied effect stays in the log", async () => {
    const { runtime, effects } = setup();
    const outcome = await runtime.execute({
      code: `async () => { const page = await files.read_huge({ size: 1_000_001 }); return page.text.length; }`,
    });
    expectStatus(outcome, "error");
    expect(outcome.code).toBe("VALUE_TOO_LARGE");
    expect(outcome.error).toContain("files.read_huge");
    expect(outcome.error).toMatch(ADVICE);
    expect(effects).toHaveLength(1);
    const state = await runtime.execution(outcome.executionId);
    expect(state?.log).toHaveLength(1);
    expect(state?.log[0]).toMatchObject({
      seq: 0,
      connector: "files",
      method: "read_huge",
      state: "applied",
      args: { size: 1_000_001 },
    });
    expect(state?.log[0]?.result).toBeUndefined();
  });

  it("a step result over the limit ends VALUE_TOO_LARGE", async () => {
    const { runtime } = setup();
    const outcome = await runtime.execute({
      code: `async () => { const blob = await codemode.step("render", () => "y".repeat(1_000_001)); return blob.length; }`,
    });
    expectStatus(outcome, "error");
    expect(outcome.code).toBe("VALUE_TOO_LARGE");
    expect(outcome.error).toContain("render");
    expect(outcome.error).toMatch(/reference/);
  });

  it("code over the limit is refused with VALUE_TOO_LARGE before anything runs", async () => {
    const { runtime, effects } = setup();
    const code = `async () => { await files.save({ path: "x" }); return 1; }\n// ${"z".repeat(MAX_DURABLE_CHARS)}`;
    const outcome = await runtime.execute({ code });
    expectStatus(outcome, "error");
    expect(outcome.code).toBe("VALUE_TOO_LARGE");
    expect(outcome.executionId).toEqual(expect.any(String));
    expect(outcome.calls).toEqual([]);
    expect(effects).toEqual([]);
  });

  it("an argument holding a function ends NOT_SERIALIZABLE and the tool never runs", async () => {
    const { runtime, effects } = setup();
    const outcome = await runtime.execute({
      code: `async () => { await files.save({ path: "a.txt", onDone: () => 1 }); return "saved"; }`,
    });
    expectStatus(outcome, "error");
    expect(outcome.code).toBe("NOT_SERIALIZABLE");
    expect(outcome.error).toMatch(/function/);
    expect(effects).toEqual([]);
  });

  it("a tool returning a host object with a function ends NOT_SERIALIZABLE; the effect is logged and nothing reaches the sandbox", async () => {
    const { runtime, effects } = setup();
    const outcome = await runtime.execute({
      code: `async () => { const handle = await files.open_handle({ path: "/tmp/a" }); return typeof handle.close === "function" ? handle.close() : "no function"; }`,
    });
    expectStatus(outcome, "error");
    expect(outcome.code).toBe("NOT_SERIALIZABLE");
    expect(outcome.error).toContain("files.open_handle");
    expect(outcome.error).toMatch(/function/);
    expect(effects).toHaveLength(1);
    const state = await runtime.execution(outcome.executionId);
    expect(state?.log[0]).toMatchObject({ seq: 0, method: "open_handle", state: "applied" });
  });
});

describe("R-DV-2 the final result is not limited", () => {
  it("a 1,500,000-character result completes; the model gets it whole and the record keeps an omission note", async () => {
    const { runtime } = setup();
    const outcome = await runtime.execute({ code: `async () => ({ report: "r".repeat(1_500_000) })` });
    expectStatus(outcome, "completed");
    const result = outcome.result as { report: string };
    expect(result.report).toHaveLength(1_500_000);
    const state = await runtime.execution(outcome.executionId);
    expect(state?.status).toBe("completed");
    const recorded = state?.result as { omitted?: unknown };
    expect(typeof recorded.omitted).toBe("string");
    expect(recorded.omitted).toMatch(/1,500,0\d\d characters/);
    expect(JSON.stringify(recorded).length).toBeLessThan(1_000);
  });

  it("a result that fits is kept in the record as it was returned", async () => {
    const { runtime } = setup();
    const outcome = await runtime.execute({ code: `async () => ({ report: "short", n: [1, 2, 3] })` });
    expectStatus(outcome, "completed");
    expect((await runtime.execution(outcome.executionId))?.result).toEqual({ report: "short", n: [1, 2, 3] });
  });
});

describe("R-DV-3 transformResult runs after the raw result is recorded", () => {
  const summarize = (result: unknown) => ({ summary: `${(result as { items: unknown[] }).items.length} items` });

  it("the model gets the transformed result; execution(id) keeps the raw one", async () => {
    const { runtime } = setup({ transformResult: summarize });
    const outcome = await runtime.execute({ code: `async () => ({ items: [1, 2, 3, 4] })` });
    expectStatus(outcome, "completed");
    expect(outcome.result).toEqual({ summary: "4 items" });
    expect((await runtime.execution(outcome.executionId))?.result).toEqual({ items: [1, 2, 3, 4] });
  });

  it("after approval too: paused, approve, transformed for the model, raw in the record", async () => {
    const { runtime, effects } = setup({ transformResult: summarize });
    const paused = await runtime.execute({
      code: `async () => {
        await files.publish({ path: "post.md" });
        return { items: ["a", "b"] };
      }`,
    });
    expectStatus(paused, "paused");
    const done = await runtime.approve({ executionId: paused.executionId });
    expectStatus(done, "completed");
    expect(done.result).toEqual({ summary: "2 items" });
    expect((await runtime.execution(paused.executionId))?.result).toEqual({ items: ["a", "b"] });
    expect(effects.map((effect) => effect.method)).toEqual(["publish"]);
  });

  it("a transform that throws leaves the model the raw result and says so in the logs", async () => {
    const { runtime } = setup({
      transformResult: () => {
        throw new Error("cannot summarize");
      },
    });
    const outcome = await runtime.execute({ code: `async () => ({ items: [] })` });
    expectStatus(outcome, "completed");
    expect(outcome.result).toEqual({ items: [] });
    expect(outcome.logs?.join("\n")).toContain("cannot summarize");
  });
});

describe("Uint8Array and bigint cross as themselves (R-SB-4, beyond)", () => {
  it("round trip through arguments, results, the final result, the log, and replay after approve", async () => {
    const { runtime, effects } = setup();
    const code = `async () => {
      const echoed = await files.echo({ bytes: new Uint8Array([1, 2, 3]), big: 12345678901234567890n });
      const stamp = await codemode.step("stamp", () => ({ big: 2n ** 70n, bytes: new Uint8Array([42]) }));
      const published = await files.publish({ big: echoed.big, bytes: echoed.bytes });
      return {
        echoedTypes: [echoed.bytes instanceof Uint8Array, typeof echoed.big],
        stampTypes: [stamp.bytes instanceof Uint8Array, typeof stamp.big],
        publishedTypes: [published.checksum instanceof Uint8Array, typeof published.id],
        bytes: echoed.bytes,
        big: echoed.big + 1n,
        stampBig: stamp.big,
        checksum: published.checksum,
      };
    }`;
    const paused = await runtime.execute({ code });
    expectStatus(paused, "paused");
    expect(paused.pending[0]?.args).toEqual({ big: 24691357802469135780n, bytes: Uint8Array.from([1, 2, 3, 255]) });
    expect(paused.pending[0]?.args).toMatchObject({ bytes: expect.any(Uint8Array) });

    const done = await runtime.approve({ executionId: paused.executionId });
    expectStatus(done, "completed");
    const expected = {
      // On the approve pass the echo and the step replay from the log: still a Uint8Array and a bigint.
      echoedTypes: [true, "bigint"],
      stampTypes: [true, "bigint"],
      publishedTypes: [true, "bigint"],
      bytes: Uint8Array.from([1, 2, 3, 255]),
      big: 24691357802469135781n,
      stampBig: 2n ** 70n,
      checksum: Uint8Array.from([9, 8, 7]),
    };
    expect(done.result).toEqual(expected);
    expect((done.result as { bytes: unknown }).bytes).toBeInstanceOf(Uint8Array);
    expect(typeof (done.result as { big: unknown }).big).toBe("bigint");

    // The echo ran once, the publish once, with host-side Uint8Array and bigint arguments.
    expect(effects.map((effect) => effect.method)).toEqual(["echo", "publish"]);
    expect(effects[0]?.args).toEqual({ bytes: Uint8Array.from([1, 2, 3]), big: 12345678901234567890n });

    const state = await runtime.execution(paused.executionId);
    expect(state?.result).toEqual(expected);
    expect(state?.log[0]).toMatchObject({
      method: "echo",
      args: { bytes: Uint8Array.from([1, 2, 3]), big: 12345678901234567890n },
      result: { bytes: Uint8Array.from([1, 2, 3, 255]), big: 24691357802469135780n },
    });
    expect(state?.log[1]).toMatchObject({
      connector: "codemode",
      method: "step",
      result: { big: 2n ** 70n, bytes: Uint8Array.from([42]) },
    });
  });

  it("an object that uses the codec's own tag key comes back as plain data", async () => {
    const { runtime, effects } = setup();
    const outcome = await runtime.execute({
      code: `async () => { await files.save({ $cm: "bigint", v: "1" }); return { $cm: "bytes", v: "AQID" }; }`,
    });
    expectStatus(outcome, "completed");
    expect(outcome.result).toEqual({ $cm: "bytes", v: "AQID" });
    expect(effects[0]?.args).toEqual({ $cm: "bigint", v: "1" });
  });
});
