import { DynamicTool, tool } from "@langchain/core/tools";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { connectorFromLangChainTools, type LangChainCallContext } from "./connector-from-langchain-tools.js";
import { runtimesClosedAfterEach } from "./testing/runtimes.js";

/** Existing LangChain tools become a Code Mode connector without rewriting (R-CON-5). */

const runtimeWith = runtimesClosedAfterEach();

function weatherTools() {
  const seen: Array<{ args: unknown; codemode: unknown }> = [];
  const getForecast = tool(
    async ({ city, days }, config) => {
      seen.push({ args: { city, days }, codemode: config.configurable?.codemode });
      return JSON.stringify({ city, days, forecast: Array.from({ length: days }, () => "sunny") });
    },
    {
      name: "get-forecast",
      description: "The weather forecast of a city.",
      schema: z.object({
        city: z.string().min(1).describe("City name"),
        days: z.number().int().min(1).max(7).default(1),
      }),
    },
  );
  const sendAlert = tool(async ({ city, message }) => `alert sent to ${city}: ${message}`, {
    name: "send_alert",
    description: "Warn the people of a city.",
    schema: {
      type: "object",
      properties: { city: { type: "string" }, message: { type: "string" } },
      required: ["city", "message"],
    },
  });
  const failing = tool(
    async () => {
      throw new Error("forecast service is down");
    },
    { name: "get_radar", description: "Radar image.", schema: z.object({ city: z.string() }) },
  );
  return { tools: [getForecast, sendAlert, failing], seen };
}

describe("connectorFromLangChainTools (R-CON-5)", () => {
  it("R-CON-5: a zod-schema LangChain tool is a method; the program gets its parsed result and the tool sees the call context", async () => {
    const { tools, seen } = weatherTools();
    const weather = connectorFromLangChainTools("weather", tools);
    expect(Object.keys(weather.tools)).toEqual(["get_forecast", "send_alert", "get_radar"]);
    expect(weather.tools.get_forecast!.description).toBe("The weather forecast of a city.");

    const runtime = runtimeWith(weather);
    const outcome = await runtime.execute({
      code: `async () => { const report = await weather.get_forecast({ city: "Oslo" }); return report.forecast; }`,
    });

    expect(outcome).toMatchObject({ status: "completed", result: ["sunny"] });
    // zod's default applied before the tool ran; the tool got the call's durable identity.
    const context = seen[0]!.codemode as LangChainCallContext;
    expect(seen[0]!.args).toEqual({ city: "Oslo", days: 1 });
    expect(context).toEqual({ executionId: outcome.executionId, seq: 0, idempotencyKey: `${outcome.executionId}:0` });
  });

  it("R-CON-5, R-CON-2: bad arguments are rejected in the program with the field and zod's message; the tool never runs", async () => {
    const { tools, seen } = weatherTools();
    const runtime = runtimeWith(connectorFromLangChainTools("weather", tools));
    const outcome = await runtime.execute({
      code: `async () => {
        try { await weather.get_forecast({ city: "Oslo", days: 30 }); return "ran"; }
        catch (error) { return error.message; }
      }`,
    });

    expect(outcome.status).toBe("completed");
    const message = (outcome as { result: string }).result;
    expect(message).toContain("weather.get_forecast");
    expect(message).toContain("- args.days: Too big: expected number to be <=7");
    expect(seen).toEqual([]);
  });

  it("R-CON-5: a JSON-schema tool validates through the runtime too; string results stay strings", async () => {
    const { tools } = weatherTools();
    const runtime = runtimeWith(connectorFromLangChainTools("weather", tools));
    const outcome = await runtime.execute({
      code: `async () => {
        let missing;
        try { await weather.send_alert({ city: "Oslo" }); } catch (error) { missing = error.message; }
        const sent = await weather.send_alert({ city: "Oslo", message: "storm" });
        return { missing, sent };
      }`,
    });

    expect(outcome).toMatchObject({ status: "completed", result: { sent: "alert sent to Oslo: storm" } });
    expect((outcome as { result: { missing: string } }).result.missing).toContain(
      "args.message: missing required property",
    );
  });

  it("R-CON-3: a tool that throws rejects the call in the program with its message", async () => {
    const { tools } = weatherTools();
    const runtime = runtimeWith(connectorFromLangChainTools("weather", tools));
    const outcome = await runtime.execute({
      code: `async () => { try { await weather.get_radar({ city: "Oslo" }); } catch (error) { return error.message; } }`,
    });
    expect(outcome).toMatchObject({ status: "completed", result: expect.stringContaining("forecast service is down") });
  });

  it("R-CON-5: the approval map gates tools, always or per call", async () => {
    const { tools } = weatherTools();
    const weather = connectorFromLangChainTools("weather", tools, {
      requiresApproval: { send_alert: true, "get-forecast": (args) => Number(args.days) > 3 },
    });
    const runtime = runtimeWith(weather);

    const short = await runtime.execute({
      code: `async () => (await weather.get_forecast({ city: "Oslo", days: 2 })).days`,
    });
    expect(short).toMatchObject({ status: "completed", result: 2 });
    const long = await runtime.execute({
      code: `async () => (await weather.get_forecast({ city: "Oslo", days: 5 })).days`,
    });
    expect(long).toMatchObject({
      status: "paused",
      pending: [{ connector: "weather", method: "get_forecast", args: { city: "Oslo", days: 5 } }],
    });
    const alert = await runtime.execute({ code: `async () => weather.send_alert({ city: "Oslo", message: "storm" })` });
    expect(alert).toMatchObject({ status: "paused", pending: [{ method: "send_alert" }] });
    expect(await runtime.approve({ executionId: alert.executionId })).toMatchObject({
      status: "completed",
      result: "alert sent to Oslo: storm",
    });
  });

  it("describe shows the zod schema as TypeScript, and search finds the tools by their descriptions", async () => {
    const { tools } = weatherTools();
    const runtime = runtimeWith(connectorFromLangChainTools("weather", tools, { instructions: "Weather data." }));
    const described = JSON.stringify(await runtime.describe("weather.get_forecast"));
    expect(described).toContain("city");
    expect(described).toContain("days");
    const found = await runtime.search("forecast of a city");
    expect(found.results[0]).toMatchObject({ path: "weather.get_forecast" });
  });

  it("a string-input DynamicTool gets its string; JSON text can be left unparsed", async () => {
    const echo = new DynamicTool({
      name: "echo",
      description: "Echo.",
      func: async (input: string) => `[${JSON.stringify(input)}]`,
    });
    const runtime = runtimeWith(connectorFromLangChainTools("text", [echo], { parseJsonResults: false }));
    const outcome = await runtime.execute({ code: `async () => text.echo({ input: "hi" })` });
    expect(outcome).toMatchObject({ status: "completed", result: '["hi"]' });
  });

  it("names the mistake when the approval map or the tool names are wrong", () => {
    const { tools } = weatherTools();
    expect(() => connectorFromLangChainTools("weather", tools, { requiresApproval: { send_alerts: true } })).toThrow(
      /requiresApproval names no tool: "send_alerts"/,
    );
    expect(() => connectorFromLangChainTools("weather", [tools[0]!, tools[0]!])).toThrow(
      /two tools are named "get-forecast"/,
    );
    expect(() => connectorFromLangChainTools("codemode", tools)).toThrow(/reserved/);
  });
});
