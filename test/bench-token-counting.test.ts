/**
 * How the token benchmark (bench/tokens.bench.ts) counts a request: the cookbook's worked example
 * ("How to count tokens with tiktoken", section 7: one weather tool, a system and a user message,
 * 101 prompt tokens by the OpenAI API for gpt-4o) comes out at the API's figure by the recipe, and
 * a Code Mode outcome's random `executionId` never changes a count.
 */
import { describe, expect, it } from "vitest";
import { recipeToolTokens, replyTokens, requestTokens, withFixedIds } from "../bench/tokens/count.ts";

const weather = {
  type: "function",
  function: {
    name: "get_current_weather",
    description: "Get the current weather in a given location",
    parameters: {
      type: "object",
      properties: {
        location: { type: "string", description: "The city and state, e.g. San Francisco, CA" },
        unit: { type: "string", description: "The unit of temperature to return", enum: ["celsius", "fahrenheit"] },
      },
      required: ["location"],
    },
  },
};
const messages = [
  { role: "system", content: "You are a helpful assistant that can answer to questions about the weather." },
  { role: "user", content: "What's the weather like in San Francisco?" },
];

describe("the token benchmark's counting", () => {
  it("the cookbook's gpt-4o example: 101 prompt tokens by the recipe, as the OpenAI API counted them", () => {
    const counted = requestTokens({ messages, tools: [weather] });
    expect(counted.messages + counted.tools.recipe).toBe(101);
    // Raw JSON counts every brace, quote and key: more than the recipe for the same tool.
    expect(counted.tools.json).toBeGreaterThan(counted.tools.recipe);
  });

  it("the recipe counts top-level properties only: nested schemas add nothing, an enum's values do", () => {
    const tool = (properties: Record<string, unknown>) => ({
      type: "function",
      function: { name: "f", description: "Does f.", parameters: { type: "object", properties } },
    });
    const flat = recipeToolTokens([tool({ items: { type: "array", description: "Items." } })]);
    const nested = recipeToolTokens([
      tool({
        items: {
          type: "array",
          description: "Items.",
          items: { type: "object", properties: { sku: { type: "string" }, quantity: { type: "number" } } },
        },
      }),
    ]);
    expect(nested).toBe(flat);
    expect(recipeToolTokens([tool({ unit: { type: "string", description: "Unit.", enum: ["c", "f"] } })])).toBe(
      recipeToolTokens([tool({ unit: { type: "string", description: "Unit." } })]) - 3 + 2 * 3 + 2,
    );
    expect(recipeToolTokens([])).toBe(0);
  });

  it("a Code Mode outcome's executionId never changes a count: every UUID is one fixed UUID of the same length", () => {
    const outcome = (id: string) => ({
      messages: [
        { role: "user", content: "Restock." },
        { role: "tool", tool_call_id: "call_1", content: JSON.stringify({ status: "completed", executionId: id }) },
      ],
    });
    const first = requestTokens(outcome("0cb38892-29b9-419c-b664-c417cd601960"));
    const second = requestTokens(outcome("5BDAA3D1-D248-4C64-96C4-C6263E91F8BD"));
    expect(second).toEqual(first);
    const text = "id 5bdaa3d1-d248-4c64-96c4-c6263e91f8bd.";
    expect(withFixedIds(text)).toBe("id 00000000-0000-4000-8000-000000000000.");
    expect(withFixedIds(text)).toHaveLength(text.length);
    expect(replyTokens({ text: "run 0cb38892-29b9-419c-b664-c417cd601960" })).toBe(
      replyTokens({ text: "run 5bdaa3d1-d248-4c64-96c4-c6263e91f8bd" }),
    );
  });
});
