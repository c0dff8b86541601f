/**
 * How the token benchmark counts a Chat Completions request, with the o200k_base tokenizer
 * (GPT-4o, GPT-4.1, o-series). OpenAI does not publish how it renders a request for the model, so
 * every figure here follows its cookbook "How to count tokens with tiktoken"
 * (github.com/openai/openai-cookbook, examples/How_to_count_tokens_with_tiktoken.ipynb):
 *
 * - Messages: 3 tokens of framing per message, its role, its text (for an assistant's tool calls,
 *   their names and argument strings), and 3 for the start of the reply.
 * - Tool definitions, counted two ways, side by side:
 *   - `json`: the `tools` array exactly as the provider serialised it. Braces, quotes, keys and
 *     every nested schema count, so it is an upper estimate that is hardest on wide schemas.
 *   - `recipe`: the cookbook's `num_tokens_for_tools` with its GPT-4o constants: 7 per function,
 *     `name:description` (final period dropped), 3 for a parameter list and 3 per top-level
 *     property plus `name:type:description`, an enum -3 plus 3 and its text per value, 12 for
 *     the list. The cookbook checked it against the API for one flat tool; it counts nothing
 *     below the top-level properties (nested objects, array items, `anyOf`, defaults,
 *     `required`), so for nested schemas it is a lower estimate.
 *
 * Every UUID (the `executionId` of a Code Mode outcome is a random one) is replaced by one fixed
 * UUID of the same length before counting, so the counts repeat from run to run.
 */
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import type { Reply } from "../../test/openai-imitation/server.ts";

type Json = Record<string, unknown>;

/** A count of tool definitions, or of a whole input, both ways (see the file's comment). */
export interface TwoWays {
  json: number;
  recipe: number;
}

/** What one request costs as the model reads it. */
export interface RequestCount {
  /** The messages, framing and the reply's start: the same either way. */
  messages: number;
  tools: TwoWays;
}

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;
const FIXED_UUID = "00000000-0000-4000-8000-000000000000";

/** The text with every UUID replaced by one fixed UUID of the same length. */
export function withFixedIds(text: string): string {
  return text.replace(UUID, FIXED_UUID);
}

const tokensOf = (text: string) => countTokens(withFixedIds(text));

/** Tokens of one request's body (Chat Completions). */
export function requestTokens(body: Json): RequestCount {
  const tools = Array.isArray(body.tools) ? (body.tools as Json[]) : [];
  let messages = 3;
  for (const message of (body.messages as Json[] | undefined) ?? []) {
    messages += 3 + tokensOf(String(message.role));
    if (typeof message.content === "string") messages += tokensOf(message.content);
    else if (Array.isArray(message.content))
      for (const part of message.content as Json[]) if (typeof part.text === "string") messages += tokensOf(part.text);
    for (const call of (message.tool_calls as Json[] | undefined) ?? []) {
      const fn = call.function as { name: string; arguments: string };
      messages += tokensOf(fn.name) + tokensOf(fn.arguments);
    }
  }
  return {
    messages,
    tools: { json: tools.length > 0 ? tokensOf(JSON.stringify(tools)) : 0, recipe: recipeToolTokens(tools) },
  };
}

/** The cookbook's constants for GPT-4o and GPT-4o mini (the models of the o200k_base tokenizer). */
const RECIPE = { functionStart: 7, propertiesStart: 3, property: 3, enumStart: -3, enumItem: 3, end: 12 };

/** Tokens of a `tools` array by the cookbook's `num_tokens_for_tools`. */
export function recipeToolTokens(tools: readonly Json[]): number {
  if (tools.length === 0) return 0;
  let total = RECIPE.end;
  for (const tool of tools) {
    const fn = (tool.function ?? {}) as Json;
    total += RECIPE.functionStart + tokensOf(`${String(fn.name)}:${withoutPeriod(fn.description)}`);
    const properties = Object.entries(((fn.parameters as Json | undefined)?.properties ?? {}) as Record<string, Json>);
    if (properties.length === 0) continue;
    total += RECIPE.propertiesStart;
    for (const [name, property] of properties) {
      total += RECIPE.property;
      if (Array.isArray(property.enum)) {
        total += RECIPE.enumStart;
        for (const item of property.enum) total += RECIPE.enumItem + tokensOf(String(item));
      }
      // A schema without a `type` (an `anyOf`, a `$ref`) gets an empty one: the recipe reads only `type`.
      const type = Array.isArray(property.type) ? property.type.join(" | ") : String(property.type ?? "");
      total += tokensOf(`${name}:${type}:${withoutPeriod(property.description)}`);
    }
  }
  return total;
}

function withoutPeriod(text: unknown): string {
  const value = typeof text === "string" ? text : "";
  return value.endsWith(".") ? value.slice(0, -1) : value;
}

/** Tokens the model writes for one reply: its text, or its calls' names and arguments. */
export function replyTokens(reply: Reply): number {
  if ("text" in reply) return tokensOf(reply.text);
  const calls = "calls" in reply ? reply.calls : [reply.call];
  return calls.reduce((sum, call) => sum + tokensOf(call.name) + tokensOf(JSON.stringify(call.arguments)), 0);
}
