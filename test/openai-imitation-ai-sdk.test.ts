/**
 * The out-of-band approval story through the real `@ai-sdk/openai` provider, against a local
 * imitation of the OpenAI HTTP API (Responses and Chat Completions, 127.0.0.1 only) that records
 * every request: a useChat conversation pauses at an order, an operator approves it on a
 * dashboard (`runtime.approve`), the user asks "did my order go through?". With `syncApprovals`
 * the provider is sent the program and its result, and the model answers from them; without it
 * the provider gets only the user's turns, and the model orders again. And the batched story
 * (R-AP-8, R-AP-9): a program waits on two orders at once, a person approves one and edits the
 * other in the approval inbox (its HTTP form), and the model is shown both results.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { createOpenAI } from "@ai-sdk/openai";
import {
  approvalReasonText,
  codemodeToolApproval,
  createCodemodeTool,
  syncApprovals,
  syncModelApprovals,
} from "@codemode/ai-sdk";
import type { Decision } from "@codemode/core";
import { generateText, type ModelMessage, stepCountIs } from "ai";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";

const INBOX_TOKEN = "inbox-token-0123456789abcdef";

import { createApprovalInbox } from "@codemode/cli/inbox";
import { createShop } from "../packages/ai-sdk/src/testing/shop.ts";
import { decisionPoster } from "./inbox-fixtures.ts";
import { chatTurn, imitationForFile, textOf, user } from "./openai-imitation/chat.ts";
import { type OpenAIImitation, startOpenAIImitation } from "./openai-imitation/server.ts";
import {
  mugAndPensModel,
  mugAndPensProgram,
  orderProgram,
  programsShown,
  resultsShown,
  shopModel,
} from "./openai-imitation/shop-model.ts";

const file = imitationForFile(shopModel);
const { apis } = file;
const shop = () => file.track(createShop());

describe.each(apis)("out-of-band approval through @ai-sdk/openai ($api API)", ({ api, model }) => {
  it("R-LC-2: approved on the dashboard, then 'did my order go through?': the provider receives the program and its result; no second order", async () => {
    const { runtime, orders } = shop();
    const first = user("u1", "Please order two logo mugs.");
    const assistant = await chatTurn(model(), runtime, [first]);
    expect(assistant.parts.find((part) => part.type === "tool-codemode")).toMatchObject({
      state: "approval-requested",
      input: { code: orderProgram },
    });
    expect(file.imitation.requests.map((request) => request.api)).toEqual([api]);

    // The operator approves on another page.
    const [pending] = (await runtime.pending()).items;
    await runtime.approve({ executionId: pending!.executionId, seq: pending!.seq, by: "operator" });
    expect(orders).toEqual([{ sku: "mug-logo", quantity: 2 }]);

    const conversation = [first, assistant, user("u2", "Did my order go through?")];
    const answer = await chatTurn(model(), runtime, await syncApprovals(conversation, runtime));

    const sent = file.imitation.requests.at(-1)!;
    expect(sent).toMatchObject({ api, body: { stream: true } });
    expect(programsShown(sent.items)).toEqual([orderProgram]);
    expect(resultsShown(sent.items)).toEqual([
      {
        status: "completed",
        executionId: pending!.executionId,
        result: { orderId: "ord-1", total: 18 },
        decided: [expect.objectContaining({ call: "shop.create_order", decision: "approved", outcome: "ran" })],
      },
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

    const sent = file.imitation.requests.at(-1)!;
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

    const sent = file.imitation.requests.at(-1)!;
    expect(programsShown(sent.items)).toEqual([orderProgram]);
    expect(resultsShown(sent.items)).toMatchObject([{ status: "completed", result: { orderId: "ord-1" } }]);
    expect(answer.text).toBe("Answer from what I was shown: Order ord-1 is placed (total 18).");
    expect(orders).toHaveLength(1);
  });
});

describe("a batched pause decided per action in the inbox, through @ai-sdk/openai", () => {
  let batched: OpenAIImitation;
  beforeAll(async () => {
    batched = await startOpenAIImitation(mugAndPensModel);
  });
  afterAll(async () => {
    await batched.close();
  });
  afterEach(() => {
    batched.requests.length = 0;
  });
  const provider = () => createOpenAI({ baseURL: batched.baseURL, apiKey: "imitation" });

  it.each([
    { api: "responses", model: () => provider()("gpt-4.1-mini") },
    { api: "chat", model: () => provider().chat("gpt-4.1-mini") },
  ] as const)(
    "R-AP-8 R-AP-9: two orders pause in one turn; one approved, one edited in the inbox; after syncApprovals the provider is shown both results, each order placed once, the edited one as edited ($api API)",
    async ({ api, model }) => {
      const { runtime, orders } = shop();
      /** A person decides in the approval inbox: its HTTP form, one action at a time, as the page posts it. */
      async function decideInInbox(executionId: string, decisions: Decision[]): Promise<void> {
        const inbox = createApprovalInbox({ runtime, token: INBOX_TOKEN, operator: "inbox" });
        const server = createServer((request, response) => inbox.handler(request, response));
        await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
        try {
          const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
          const login = await fetch(`${origin}/?token=${INBOX_TOKEN}`, { redirect: "manual" });
          const cookie = (login.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
          const { post } = await decisionPoster({ base: origin, origin, cookie }, executionId);
          for (const { seq, decision, args } of decisions) {
            const fields = {
              seq: String(seq),
              decision,
              ...(args === undefined ? {} : { args: JSON.stringify(args) }),
            };
            const { status, answer } = await post(fields);
            expect([status, answer.ok], JSON.stringify(answer)).toEqual([200, true]);
          }
        } finally {
          await inbox.close();
          server.closeAllConnections();
          await new Promise<void>((resolve) => server.close(() => resolve()));
        }
      }

      const first = user("u1", "Please order a logo mug and three blue pens.");
      const assistant = await chatTurn(model(), runtime, [first]);
      const part = assistant.parts.find((candidate) => candidate.type === "tool-codemode") as {
        state: string;
        input: { code: string };
        approval: { requestReason: string };
      };
      expect(part).toMatchObject({ state: "approval-requested", input: { code: mugAndPensProgram } });
      expect(approvalReasonText(part.approval.requestReason)).toBe(
        'Approve these 2 actions?\n1. shop.create_order({"sku":"mug-logo","quantity":1})\n2. shop.create_order({"sku":"pen-blue","quantity":3})',
      );
      expect(batched.requests.map((request) => request.api)).toEqual([api]);

      const [mug, pens] = (await runtime.pending()).items;
      const { executionId } = mug!;
      await decideInInbox(executionId, [
        { seq: mug!.seq, decision: "approve" },
        { seq: pens!.seq, decision: "edit", args: { sku: "pen-blue", quantity: 2 } },
      ]);

      const conversation = [first, assistant, user("u2", "Did my orders go through?")];
      const answer = await chatTurn(model(), runtime, await syncApprovals(conversation, runtime));

      const sent = batched.requests.at(-1)!;
      expect(sent).toMatchObject({ api, body: { stream: true } });
      expect(programsShown(sent.items)).toEqual([mugAndPensProgram]);
      expect(resultsShown(sent.items)).toEqual([
        {
          status: "completed",
          executionId,
          result: {
            orders: [
              { orderId: "ord-1", sku: "mug-logo", quantity: 1 },
              { orderId: "ord-2", sku: "pen-blue", quantity: 2 },
            ],
          },
          decided: [
            expect.objectContaining({ args: { sku: "mug-logo", quantity: 1 }, decision: "approved", outcome: "ran" }),
            expect.objectContaining({ args: { sku: "pen-blue", quantity: 2 }, decision: "edited", outcome: "ran" }),
          ],
        },
      ]);
      expect(textOf(answer)).toBe("Answer from what I was shown: ord-1: 1 × mug-logo; ord-2: 2 × pen-blue.");
      expect(orders).toEqual([
        { sku: "mug-logo", quantity: 1 },
        { sku: "pen-blue", quantity: 2 },
      ]);
      expect((await runtime.executions()).items).toHaveLength(1);
      const log = (await runtime.execution(executionId))?.log;
      expect(log?.map((entry) => [entry.state, entry.decision?.decision, entry.decision?.by])).toEqual([
        ["applied", "approve", "dana"],
        ["applied", "edit", "dana"],
      ]);
      expect(log?.[1]).toMatchObject({ args: { quantity: 2 }, requestedArgs: { quantity: 3 } });
    },
  );
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
