/**
 * R-CN-OA: a tool's result is checked against its `outputSchema` before the program sees it. A
 * result that breaks it is a tool error the program can catch (`TOOL_OUTPUT_INVALID: …`), recorded
 * as the call's error, and every replay rejects the same way without running the tool again.
 */
import { type CodemodeRuntime, createCodemodeRuntime, defineConnector } from "@codemode/core";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";

const runtimes: CodemodeRuntime[] = [];
afterEach(async () => {
  for (const runtime of runtimes.splice(0)) await runtime.close();
});

function ordersRuntime(calls: string[]) {
  const orders = defineConnector({
    name: "orders",
    tools: {
      get_order: {
        inputSchema: { type: "object", properties: { id: { type: "integer" } }, required: ["id"] },
        outputSchema: {
          type: "object",
          properties: { id: { type: "integer" }, status: { enum: ["open", "shipped"] } },
          required: ["id", "status"],
        },
        execute: async (args: { id: number }) => {
          calls.push(`get ${args.id}`);
          // Order 2 comes back as the API broke it: a string id and a status the schema does not know.
          return args.id === 2 ? { id: "2", status: "lost" } : { id: args.id, status: "open" };
        },
      },
      // A Standard Schema output: its parsed value is what the program gets.
      totals: {
        outputSchema: z.object({ cents: z.number().int() }),
        execute: async () => {
          calls.push("totals");
          return { cents: 12.5, extra: "dropped" };
        },
      },
      cancel: { requiresApproval: true, execute: async () => "cancelled" },
    },
  });
  const runtime = createCodemodeRuntime({ connectors: [orders] });
  runtimes.push(runtime);
  return runtime;
}

describe("R-CN-OA results are checked against outputSchema", () => {
  it("R-CN-OA a broken result is an error the program catches, recorded, and replayed the same", async () => {
    const calls: string[] = [];
    const runtime = ordersRuntime(calls);
    const code = `async () => {
      const good = await orders.get_order({ id: 1 });
      let caught;
      try { await orders.get_order({ id: 2 }); } catch (error) { caught = error.message; }
      await orders.cancel({ id: 1 });
      return { good, caught };
    }`;
    const paused = await runtime.execute({ code });
    expect(paused.status).toBe("paused");
    expect(calls).toEqual(["get 1", "get 2"]);
    const entry = paused.calls!.find((call) => call.method === "get_order" && (call.args as { id: number }).id === 2);
    expect(entry?.state).toBe("error");
    expect(entry?.error).toBe(
      'TOOL_OUTPUT_INVALID: the result of orders.get_order does not match its outputSchema:\n- result.id: expected an integer, got string "2"\n- result.status: expected "open" or "shipped", got "lost"',
    );

    // The approval makes the program run again: the broken result is not fetched again, and the
    // program catches the same error it caught the first time.
    const done = await runtime.approve({ executionId: paused.executionId });
    expect(done).toMatchObject({ status: "completed" });
    expect(calls).toEqual(["get 1", "get 2"]);
    if (done.status !== "completed") return;
    expect(done.result).toEqual({ good: { id: 1, status: "open" }, caught: entry?.error });

    const check = await runtime.replayCheck(paused.executionId);
    expect(check).toMatchObject({ ok: true });
  });

  it("R-CN-OA an uncaught broken result fails the run with its message; a Standard Schema's output is what the program gets", async () => {
    const calls: string[] = [];
    const runtime = ordersRuntime(calls);
    const failed = await runtime.execute({ code: "async () => orders.get_order({ id: 2 })" });
    expect(failed).toMatchObject({ status: "error", code: "PROGRAM_ERROR" });
    if (failed.status === "error")
      expect(failed.error).toContain("TOOL_OUTPUT_INVALID: the result of orders.get_order");

    const totals = await runtime.execute({
      code: "async () => { try { return await orders.totals(); } catch (e) { return e.message } }",
    });
    expect(totals.status).toBe("completed");
    if (totals.status === "completed")
      expect(totals.result).toMatch(
        /^TOOL_OUTPUT_INVALID: the result of orders.totals does not match its outputSchema:\n- result.cents: /,
      );
  });

  it("R-CN-OA a Standard Schema's parsed output is handed on, and a schema that does not compile is refused at creation", async () => {
    const tally = defineConnector({
      name: "tally",
      tools: {
        count: { outputSchema: z.object({ n: z.number() }), execute: async () => ({ n: 3, secret: "kept out" }) },
      },
    });
    const runtime = createCodemodeRuntime({ connectors: [tally] });
    runtimes.push(runtime);
    const counted = await runtime.execute({ code: "async () => tally.count()" });
    expect(counted.status === "completed" && counted.result).toEqual({ n: 3 });

    const broken = defineConnector({
      name: "broken",
      tools: { read: { outputSchema: { type: "strnig" }, execute: async () => 1 } },
    });
    expect(() => createCodemodeRuntime({ connectors: [broken] })).toThrow(
      /tool "broken.read" has an outputSchema that does not compile/,
    );
  });
});
