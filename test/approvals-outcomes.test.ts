/**
 * Outcomes are data (R-RT-1, R-RT-2): completed, paused and error outcomes, syntax errors, endless
 * loops, thrown values and bad input come back as outcomes, never throws; configuration errors
 * throw at creation (R-RT-1, R-CON-4).
 */
import {
  type CodemodeRuntimeOptions,
  type ConnectorDefinition,
  createCodemodeRuntime,
  defineConnector,
} from "@codemode/core";
import { describe, expect, it } from "vitest";
import { closeRuntimesAfterEach, ORDER_CODE, setup, track } from "./approvals-fixtures.ts";
import { expectCompleted, expectError, expectPaused } from "./outcome-fixtures.ts";

closeRuntimesAfterEach();

describe("outcomes are data (R-RT-1, R-RT-2)", () => {
  it("R-RT-2: completed, paused and error outcomes each carry executionId and the log as calls", async () => {
    const { runtime } = setup();
    const completed = expectCompleted(await runtime.execute({ code: `async () => (await shop.list_items()).length` }));
    expect(completed.executionId).toMatch(/\S/);
    expect(completed.calls).toHaveLength(1);

    const paused = expectPaused(await runtime.execute({ code: ORDER_CODE }));
    expect(paused.executionId).toMatch(/\S/);
    expect(paused.calls).toHaveLength(2);

    const failed = expectError(
      await runtime.execute({ code: `async () => { await shop.list_items(); throw new Error("nope"); }` }),
    );
    expect(failed.executionId).toMatch(/\S/);
    expect(failed.calls).toHaveLength(1);
    expect(new Set([completed.executionId, paused.executionId, failed.executionId]).size).toBe(3);

    const syntax = expectError(await runtime.execute({ code: `async () => { return ( }` }), "SYNTAX_ERROR");
    expect(syntax.executionId).toMatch(/\S/);
    expect(syntax.calls).toEqual([]);

    const notFound = expectError(await runtime.approve({ executionId: "missing-id" }), "NOT_FOUND");
    expect(notFound.executionId).toBe("missing-id");
    expect(notFound.calls).toEqual([]);

    const notPaused = expectError(await runtime.approve({ executionId: completed.executionId }), "NOT_PAUSED");
    expect(notPaused.executionId).toBe(completed.executionId);
    expect(notPaused.calls).toEqual(completed.calls);
  });

  it("R-RT-1 R-SB-2: a syntax error comes back as SYNTAX_ERROR with line and column, and the record says error", async () => {
    const { runtime } = setup();
    const outcome = expectError(
      await runtime.execute({ code: `async () => {\n  const x = 1;\n  return x +;\n}` }),
      "SYNTAX_ERROR",
    );
    expect(outcome.error).toMatch(/line \d+, column \d+/);
    expect((await runtime.execution(outcome.executionId))?.status).toBe("error");
  });

  it("R-RT-1 R-SB-3: an endless loop comes back as TIMEOUT and the runtime keeps working", async () => {
    const { runtime } = setup({ limits: { timeoutMs: 300 } });
    const outcome = expectError(await runtime.execute({ code: `async () => { while (true) {} }` }), "TIMEOUT");
    expect(outcome.executionId).toMatch(/\S/);
    expect(outcome.calls).toEqual([]);
    expect(expectCompleted(await runtime.execute({ code: `async () => 1 + 1` })).result).toBe(2);
  });

  it("R-RT-1: thrown values, host globals and bad input come back as outcomes, never throws", async () => {
    const { runtime } = setup();
    const thrown = expectError(
      await runtime.execute({ code: `async () => { throw new TypeError("broken plan"); }` }),
      "PROGRAM_ERROR",
    );
    expect(thrown.error).toContain("broken plan");
    const thrownString = expectError(
      await runtime.execute({ code: `async () => { throw "just a string"; }` }),
      "PROGRAM_ERROR",
    );
    expect(thrownString.error).toContain("just a string");
    const noProcess = expectError(await runtime.execute({ code: `async () => process.exit(1)` }), "PROGRAM_ERROR");
    expect(noProcess.error).toContain("process");
    const unknownTool = expectError(await runtime.execute({ code: `async () => shop.delete_everything({})` }));
    expect(unknownTool.executionId).toMatch(/\S/);
    const notCode = expectError(await runtime.execute({ code: 42 } as never));
    expect(notCode.executionId).toMatch(/\S/);
    expect(notCode.calls).toEqual([]);
    expect((await runtime.approve(undefined as never)).status).toBe("error");
    expect((await runtime.approve({ executionId: 7 } as never)).status).toBe("error");
    expect(await runtime.reject(undefined as never)).toBe(false);
    expect(await runtime.reject({ executionId: "x" } as never)).toBe(false);
  });
});

describe("configuration errors throw at creation (R-RT-1, R-CON-4)", () => {
  const tool = { execute: () => 1 };

  it("R-RT-1: two connectors with the same name throw, naming it", () => {
    const first = defineConnector({ name: "shop", tools: { a: tool } });
    const second = defineConnector({ name: "shop", tools: { b: tool } });
    expect(() => createCodemodeRuntime({ connectors: [first, second] })).toThrow(/two connectors are named "shop"/);
  });

  it("R-RT-1: the reserved name codemode throws", () => {
    const reserved: ConnectorDefinition = { name: "codemode", tools: { a: tool } };
    expect(() => createCodemodeRuntime({ connectors: [reserved] })).toThrow(/"codemode" is reserved/);
    expect(() => defineConnector(reserved)).toThrow(/"codemode" is reserved/);
  });

  it("R-CON-4: replay: reexecute with requiresApproval throws at creation, naming the tool", () => {
    const gatedRead: ConnectorDefinition = {
      name: "files",
      tools: { read_file: { replay: "reexecute", requiresApproval: true, execute: () => "x" } },
    };
    expect(() => createCodemodeRuntime({ connectors: [gatedRead] })).toThrow(/files\.read_file/);
    const conditional: ConnectorDefinition = {
      name: "files",
      tools: { read_file: { replay: "reexecute", requiresApproval: () => false, execute: () => "x" } },
    };
    expect(() => createCodemodeRuntime({ connectors: [conditional] })).toThrow(/files\.read_file/);
    const fine: ConnectorDefinition = {
      name: "files",
      tools: { read_file: { replay: "reexecute", requiresApproval: false, execute: () => "x" } },
    };
    expect(() => track(createCodemodeRuntime({ connectors: [fine] }))).not.toThrow();
  });

  it.each<[string, Partial<CodemodeRuntimeOptions>, RegExp]>([
    ["zero timeout", { limits: { timeoutMs: 0 } }, /limits\.timeoutMs/],
    ["negative timeout", { limits: { timeoutMs: -5 } }, /limits\.timeoutMs/],
    ["NaN timeout", { limits: { timeoutMs: Number.NaN } }, /limits\.timeoutMs/],
    ["tiny heap", { limits: { memoryMb: 4 } }, /limits\.memoryMb/],
    ["text maxExecutions", { maxExecutions: "ten" as never }, /maxExecutions/],
    ["bad name", { name: "has spaces" }, /name/],
    ["bad storage", { storage: {} as never }, /storage/],
  ])("R-RT-1: bad limits and options throw at creation (%s)", (_label, options, message) => {
    expect(() => createCodemodeRuntime(options)).toThrow(message);
  });
});
