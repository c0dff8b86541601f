/**
 * R-CN-OA: a tool says who calls it. `callers: ["model"]` keeps it out of programs (their globals,
 * search, describe, the model's description) and makes it a tool the model calls directly through
 * `runtime.callTool`: a one-call run, logged and approved like any other. Both callers: either way.
 */
import { type CodemodeRuntime, createCodemodeRuntime, defineConnector } from "@codemode/core";
import { afterEach, describe, expect, it } from "vitest";

const runtimes: CodemodeRuntime[] = [];
afterEach(async () => {
  for (const runtime of runtimes.splice(0)) await runtime.close();
});

function shopRuntime(sent: string[]) {
  const shop = defineConnector({
    name: "shop",
    tools: {
      find_product: {
        description: "Finds a product by name.",
        callers: ["code", "model"],
        inputSchema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
        execute: async (args: { name: string }) => ({ sku: `sku-${args.name}`, cents: 250 }),
      },
      place_order: {
        description: "Places an order.",
        callers: ["model"],
        requiresApproval: true,
        inputSchema: { type: "object", properties: { sku: { type: "string" } }, required: ["sku"] },
        execute: async (args: { sku: string }) => {
          sent.push(args.sku);
          return { order: `order-${args.sku}` };
        },
      },
      stock: { execute: async () => 12 },
    },
  });
  const runtime = createCodemodeRuntime({ connectors: [shop] });
  runtimes.push(runtime);
  return runtime;
}

describe("R-CN-OA tools for code, for the model, or both", () => {
  it("R-CN-OA a model-only tool is not a program's: not a global, not found, refused if asked for", async () => {
    const sent: string[] = [];
    const runtime = shopRuntime(sent);
    expect(runtime.modelDescription()).not.toContain("place_order");
    expect((await runtime.search("order")).results.map((result) => result.path)).not.toContain("shop.place_order");
    const described = await runtime.describe("shop");
    expect(described.kind === "connector" && described.methods).toEqual(["find_product", "stock"]);
    const outcome = await runtime.execute({
      code: `async () => {
        const kinds = [typeof shop.place_order, typeof shop.find_product];
        let refused; try { await shop.place_order({ sku: "x" }); } catch (error) { refused = error.message; }
        return { kinds, refused, stock: await shop.stock() };
      }`,
    });
    expect(outcome).toMatchObject({ status: "completed", result: { kinds: ["undefined", "function"], stock: 12 } });
    expect(outcome.status === "completed" && (outcome.result as { refused: string }).refused).toMatch(/not a function/);
    expect(sent).toEqual([]);
  });

  it("R-CN-OA callTool is a one-call run: logged, paused for approval, approved, its result the tool's", async () => {
    const sent: string[] = [];
    const runtime = shopRuntime(sent);
    expect(runtime.modelTools().map(({ name, tool }) => [name, tool])).toEqual([
      ["shop_find_product", "shop.find_product"],
      ["shop_place_order", "shop.place_order"],
    ]);
    const [find, place] = runtime.modelTools();
    expect(find?.inputSchema).toMatchObject({ required: ["name"] });
    expect([find?.needsApproval({ name: "pen" }), place?.needsApproval({ sku: "x" })]).toEqual([false, true]);

    const found = await runtime.callTool({ tool: "shop.find_product", args: { name: "pen" }, by: "model" });
    expect(found).toMatchObject({ status: "completed", result: { sku: "sku-pen", cents: 250 } });
    const paused = await runtime.callTool({ tool: "shop.place_order", args: { sku: "sku-pen" } });
    expect(paused.status).toBe("paused");
    expect(sent).toEqual([]);
    if (paused.status !== "paused") return;
    expect(paused.pending.map((action) => [action.connector, action.method, action.args])).toEqual([
      ["shop", "place_order", { sku: "sku-pen" }],
    ]);
    const done = await runtime.approve({ executionId: paused.executionId, by: "ops" });
    expect(done).toMatchObject({ status: "completed", result: { order: "order-sku-pen" } });
    expect(sent).toEqual(["sku-pen"]);
    const state = await runtime.execution(paused.executionId);
    expect(state?.log.map((call) => [call.method, call.state, call.decision?.by])).toEqual([
      ["place_order", "applied", "ops"],
    ]);
    // The run replays like any other: recover and replayCheck agree with the log.
    expect(await runtime.replayCheck(paused.executionId)).toMatchObject({ ok: true });
  });

  it("R-CN-OA callTool refuses what is not the model's, bad arguments and bad callers with clear errors", async () => {
    const runtime = shopRuntime([]);
    expect(await runtime.callTool({ tool: "shop.stock" })).toMatchObject({
      status: "error",
      code: "NOT_FOUND",
      error:
        'callTool: shop.stock is not called by the model directly: give it callers: ["model"] (or ["code", "model"])',
    });
    expect(await runtime.callTool({ tool: "shop.nope" })).toMatchObject({ status: "error", code: "NOT_FOUND" });
    expect(await runtime.callTool({ tool: 42 as unknown as string })).toMatchObject({
      status: "error",
      code: "NOT_FOUND",
    });
    const invalid = await runtime.callTool({ tool: "shop.find_product", args: { name: 7 } });
    expect(invalid).toMatchObject({ status: "error", code: "PROGRAM_ERROR" });
    expect(invalid.status === "error" && invalid.error).toContain("Invalid arguments for shop.find_product");
    expect(await runtime.callTool({ tool: "shop.find_product", args: { name: 10n } })).toMatchObject({
      status: "error",
      code: "NOT_SERIALIZABLE",
    });
    expect(() =>
      defineConnector({ name: "x", tools: { a: { callers: ["robot" as "model"], execute: () => 1 } } }),
    ).toThrow('tool "x.a" has callers ["robot"]: a list of "code" and/or "model"');
    expect(() => defineConnector({ name: "x", tools: { a: { callers: [], execute: () => 1 } } })).toThrow(
      /callers \[\]/,
    );
  });
});
