/**
 * The out-of-band approval story through the real `@ai-sdk/openai` provider, against a local
 * imitation of the OpenAI HTTP API (Responses and Chat Completions, 127.0.0.1 only) that records
 * every request: a useChat conversation pauses at an order, an operator approves it on a
 * dashboard (`runtime.approve`), the user asks "did my order go through?". With `syncApprovals`
 * the provider is sent the program and its result, and the model answers from them; without it
 * the provider gets only the user's turns, and the model orders again.
 */
import { createOpenAI } from "@ai-sdk/openai";
import { codemodeToolApproval, createCodemodeTool, syncApprovals, syncModelApprovals } from "@codemode/ai-sdk";
import type { CodemodeRuntime } from "@codemode/core";
import {
  convertToModelMessages,
  generateText,
  type LanguageModel,
  type ModelMessage,
  readUIMessageStream,
  stepCountIs,
  streamText,
  type UIMessage,
} from "ai";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createShop } from "../packages/ai-sdk/src/testing/shop.ts";
import { type OpenAIImitation, startOpenAIImitation } from "./openai-imitation/server.ts";
import { orderProgram, programsShown, resultsShown, shopModel } from "./openai-imitation/shop-model.ts";

let imitation: OpenAIImitation;
beforeAll(async () => {
  imitation = await startOpenAIImitation(shopModel);
});
afterAll(async () => {
  await imitation.close();
});
const runtimes: CodemodeRuntime[] = [];
afterEach(async () => {
  imitation.requests.length = 0;
  await Promise.all(runtimes.splice(0).map((runtime) => runtime.close()));
});

function shop() {
  const created = createShop();
  runtimes.push(created.runtime);
  return created;
}

const apis = [
  { api: "responses", model: () => createOpenAI({ baseURL: imitation.baseURL, apiKey: "imitation" })("gpt-4.1-mini") },
  { api: "chat", model: () => createOpenAI({ baseURL: imitation.baseURL, apiKey: "imitation" }).chat("gpt-4.1-mini") },
] as const;

/** One request of a useChat app: its server converts the UI messages and streams the answer back. */
async function chatTurn(model: LanguageModel, runtime: CodemodeRuntime, messages: UIMessage[]): Promise<UIMessage> {
  const tools = { codemode: createCodemodeTool(runtime) };
  const result = streamText({
    model,
    tools,
    toolApproval: { codemode: codemodeToolApproval(runtime) },
    stopWhen: stepCountIs(5),
    messages: await convertToModelMessages(messages, { tools }),
  });
  let assistant: UIMessage | undefined;
  for await (const message of readUIMessageStream({ stream: result.toUIMessageStream() })) assistant = message;
  return assistant!;
}

const user = (id: string, text: string): UIMessage => ({ id, role: "user", parts: [{ type: "text", text }] });
const textOf = (message: UIMessage) => message.parts.map((part) => (part.type === "text" ? part.text : "")).join("");

describe.each(apis)("out-of-band approval through @ai-sdk/openai ($api API)", ({ api, model }) => {
  it("R-LC-2: approved on the dashboard, then 'did my order go through?': the provider receives the program and its result; no second order", async () => {
    const { runtime, orders } = shop();
    const first = user("u1", "Please order two logo mugs.");
    const assistant = await chatTurn(model(), runtime, [first]);
    expect(assistant.parts.find((part) => part.type === "tool-codemode")).toMatchObject({
      state: "approval-requested",
      input: { code: orderProgram },
    });
    expect(imitation.requests.map((request) => request.api)).toEqual([api]);

    // The operator approves on another page.
    const [pending] = (await runtime.pending()).items;
    await runtime.approve({ executionId: pending!.executionId, seq: pending!.seq, by: "operator" });
    expect(orders).toEqual([{ sku: "mug-logo", quantity: 2 }]);

    const conversation = [first, assistant, user("u2", "Did my order go through?")];
    const answer = await chatTurn(model(), runtime, await syncApprovals(conversation, runtime));

    const sent = imitation.requests.at(-1)!;
    expect(sent).toMatchObject({ api, body: { stream: true } });
    expect(programsShown(sent.items)).toEqual([orderProgram]);
    expect(resultsShown(sent.items)).toEqual([
      { status: "completed", executionId: pending!.executionId, result: { orderId: "ord-1", total: 18 } },
    ]);
    expect(JSON.stringify(sent.body)).not.toContain('"calls"');
    expect(textOf(answer)).toBe("Answer from what I was shown: Order ord-1 is placed (total 18).");
    expect(orders).toHaveLength(1);
    expect((await runtime.executions()).items).toHaveLength(1);
  });

  it("without syncApprovals the provider gets only the user's turns, and the model orders again", async () => {
    const { runtime } = shop();
    const first = user("u1", "Please order two logo mugs.");
    const assistant = await chatTurn(model(), runtime, [first]);
    const [pending] = (await runtime.pending()).items;
    await runtime.approve({ executionId: pending!.executionId, seq: pending!.seq });

    const again = await chatTurn(model(), runtime, [first, assistant, user("u2", "Did my order go through?")]);

    const sent = imitation.requests.at(-1)!;
    expect(sent.items.filter((item) => item.type !== "text" || item.role !== "system")).toEqual([
      { type: "text", role: "user", text: "Please order two logo mugs." },
      { type: "text", role: "user", text: "Did my order go through?" },
    ]);
    // A second program to order: only the approval gate keeps it from placing a second order.
    expect(again.parts.find((part) => part.type === "tool-codemode")).toMatchObject({ state: "approval-requested" });
    expect((await runtime.executions()).items).toHaveLength(2);
  });
});

describe("out-of-band approval with model messages through @ai-sdk/openai (Responses API)", () => {
  it("R-LC-2: syncModelApprovals gives the open call its result: no `Tool result is missing`, the provider sees program and result", async () => {
    const { runtime, orders } = shop();
    const provider = apis[0].model();
    const settings = {
      model: provider,
      tools: { codemode: createCodemodeTool(runtime) },
      toolApproval: { codemode: codemodeToolApproval(runtime) },
      stopWhen: stepCountIs(5),
    };
    const messages: ModelMessage[] = [{ role: "user", content: "Please order two logo mugs." }];
    const first = await generateText({ ...settings, messages });
    messages.push(...first.responseMessages);
    const [pending] = (await runtime.pending()).items;
    await runtime.approve({ executionId: pending!.executionId, seq: pending!.seq });
    messages.push({ role: "user", content: "Did my order go through?" });

    const answer = await generateText({ ...settings, messages: await syncModelApprovals(messages, runtime) });

    const sent = imitation.requests.at(-1)!;
    expect(programsShown(sent.items)).toEqual([orderProgram]);
    expect(resultsShown(sent.items)).toMatchObject([{ status: "completed", result: { orderId: "ord-1" } }]);
    expect(answer.text).toBe("Answer from what I was shown: Order ord-1 is placed (total 18).");
    expect(orders).toHaveLength(1);
  });
});

describe("the OpenAI imitation itself", () => {
  it.each(apis)(
    "a reply of { calls: [] } fails the request with a clear error, never an empty tool-call turn ($api API)",
    async ({ api }) => {
      const empty = await startOpenAIImitation(() => ({ calls: [] }));
      try {
        const provider = createOpenAI({ baseURL: empty.baseURL, apiKey: "imitation" });
        const request = generateText({
          model: api === "chat" ? provider.chat("gpt-4.1-mini") : provider("gpt-4.1-mini"),
          prompt: "Hello.",
          maxRetries: 0,
        });
        await expect(request).rejects.toThrow("the imitated model replied { calls: [] }");
        expect(empty.requests).toHaveLength(1);
      } finally {
        await empty.close();
      }
    },
  );
});
