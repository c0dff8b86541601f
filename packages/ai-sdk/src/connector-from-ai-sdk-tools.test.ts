import { generateText, jsonSchema, type ModelMessage, type ToolSet, tool } from "ai";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { connectorFromAiSdkTools } from "./connector-from-ai-sdk-tools.js";
import { chatSettings } from "./testing/approvals.js";
import { runtimesClosedAfterEach } from "./testing/runtimes.js";
import { lastToolResultValue, scriptedModel } from "./testing/scripted-model.js";

const { runtimeWith } = runtimesClosedAfterEach();

/** An existing AI SDK tool set, written for a plain tool-calling agent. */
function billingTools() {
  const refunds: Array<{ invoice: string; amount: number }> = [];
  const seen: Array<{ toolCallId: string; messages: unknown; context: unknown }> = [];
  const tools = {
    findInvoice: tool({
      description: "Find an invoice by number.",
      inputSchema: z.object({ number: z.string().regex(/^INV-\d+$/) }),
      execute: async ({ number }, options) => {
        seen.push({ toolCallId: options.toolCallId, messages: options.messages, context: options.context });
        return { number, customer: "acme", total: 1200 };
      },
    }),
    refund: tool({
      description: "Refund part of an invoice.",
      inputSchema: z.object({ invoice: z.string(), amount: z.number().positive() }),
      needsApproval: ({ amount }) => amount > 100,
      execute: async ({ invoice, amount }) => {
        refunds.push({ invoice, amount });
        return { refunded: amount };
      },
    }),
  } satisfies ToolSet;
  return { tools, refunds, seen };
}

const refundProgram = `async () => {
  const invoice = await billing.findInvoice({ number: "INV-7" });
  const small = await billing.refund({ invoice: invoice.number, amount: 20 });
  const large = await billing.refund({ invoice: invoice.number, amount: 500 });
  return { small: small.refunded, large: large.refunded };
}`;

describe("connectorFromAiSdkTools", () => {
  it("R-CON-5: a ToolSet with zod schemas and needsApproval works inside Code Mode, pausing where it should", async () => {
    const { tools, refunds, seen } = billingTools();
    const runtime = runtimeWith(connectorFromAiSdkTools("billing", tools, { instructions: "Invoices and refunds." }));

    const paused = await runtime.execute({ code: refundProgram });
    expect(paused).toMatchObject({
      status: "paused",
      pending: [{ connector: "billing", method: "refund", args: { invoice: "INV-7", amount: 500 } }],
    });
    expect(refunds).toEqual([{ invoice: "INV-7", amount: 20 }]);
    expect(seen).toEqual([{ toolCallId: `${paused.executionId}:0`, messages: [], context: {} }]);

    const done = await runtime.approve({ executionId: paused.executionId });
    expect(done).toMatchObject({ status: "completed", result: { small: 20, large: 500 } });
    expect(refunds).toEqual([
      { invoice: "INV-7", amount: 20 },
      { invoice: "INV-7", amount: 500 },
    ]);
  });

  it("R-CON-5 R-CON-2: the zod schema validates arguments before anything runs; the code can catch the rejection", async () => {
    const { tools, refunds } = billingTools();
    const runtime = runtimeWith(connectorFromAiSdkTools("billing", tools));
    const outcome = await runtime.execute({
      code: `async () => {
        try { await billing.refund({ invoice: "INV-7", amount: -5 }); } catch (error) { return String(error.message); }
      }`,
    });
    expect(outcome).toMatchObject({
      status: "completed",
      result: expect.stringMatching(/Invalid arguments for billing\.refund[\s\S]*amount/),
    });
    expect(refunds).toEqual([]);
  });

  it("R-CON-5: descriptions and schemas reach search and describe", async () => {
    const { tools } = billingTools();
    const runtime = runtimeWith(connectorFromAiSdkTools("billing", tools, { instructions: "Invoices and refunds." }));
    expect(await runtime.describe("billing.refund")).toMatchObject({
      kind: "method",
      description: "Refund part of an invoice.",
      requiresApproval: "depends on arguments",
      declaration: expect.stringMatching(/amount: number/),
    });
    expect((await runtime.search("refund invoice")).results[0]).toMatchObject({ path: "billing.refund" });
  });

  it("R-CON-5: jsonSchema() tools validate against their JSON Schema; needsApproval: true pauses every call", async () => {
    const sent: string[] = [];
    const mail = connectorFromAiSdkTools("mail", {
      send: tool({
        description: "Send an email.",
        inputSchema: jsonSchema<{ to: string }>({
          type: "object",
          properties: { to: { type: "string", format: "email" } },
          required: ["to"],
        }),
        needsApproval: true,
        execute: async ({ to }) => void sent.push(to),
      }),
    });
    const runtime = runtimeWith(mail);
    expect(await runtime.execute({ code: "async () => mail.send({ to: 'not an address' })" })).toMatchObject({
      status: "error",
      error: expect.stringContaining("Invalid arguments for mail.send"),
    });
    expect(await runtime.execute({ code: "async () => mail.send({ to: 'ann@acme.test' })" })).toMatchObject({
      status: "paused",
    });
    expect(sent).toEqual([]);
    expect(await runtime.describe("mail.send")).toMatchObject({ declaration: expect.stringMatching(/to: string/) });
  });

  it("R-CON-5: a needsApproval that returns a promise cannot be awaited where Code Mode decides, so the call asks", async () => {
    const runtime = runtimeWith(
      connectorFromAiSdkTools("pay", {
        transfer: tool({
          inputSchema: z.object({ cents: z.number() }),
          needsApproval: async () => false,
          execute: async ({ cents }) => cents,
        }),
      }),
    );
    expect(await runtime.execute({ code: "async () => pay.transfer({ cents: 1 })" })).toMatchObject({
      status: "paused",
    });
  });
});

describe("connectorFromAiSdkTools: unusual tools, and a whole conversation", () => {
  it("R-CON-5: tools without execute are refused at creation, by name", () => {
    const clientSide = tool({
      description: "Ask the user.",
      inputSchema: z.object({ question: z.string() }),
      outputSchema: z.string(),
    });
    const { tools } = billingTools();
    expect(() => connectorFromAiSdkTools("ui", { ...tools, askUser: clientSide, confirm: clientSide })).toThrow(
      /connectorFromAiSdkTools\("ui"\): "askUser", "confirm" have no execute function\. Code Mode runs every connector call on the host/,
    );
  });

  it("R-CON-5: tool names that are not identifiers become identifiers; a streaming execute gives its last value", async () => {
    const runtime = runtimeWith(
      connectorFromAiSdkTools("weather", {
        "get-forecast": tool({
          inputSchema: z.object({ city: z.string() }),
          async *execute({ city }) {
            yield { city, status: "loading" };
            yield { city, status: "done", celsius: 21 };
          },
        }),
      }),
    );
    expect(await runtime.execute({ code: "async () => weather.get_forecast({ city: 'Lyon' })" })).toMatchObject({
      status: "completed",
      result: { city: "Lyon", status: "done", celsius: 21 },
    });
  });

  it("R-CON-5 R-AI-1: the converted tools inside a generateText conversation, through the codemode tool and its approvals", async () => {
    const { tools, refunds } = billingTools();
    const runtime = runtimeWith(connectorFromAiSdkTools("billing", tools));
    const { model, prompts } = scriptedModel([
      { code: refundProgram },
      (prompt) => ({ text: `Refunded ${JSON.stringify(lastToolResultValue(prompt))}` }),
    ]);
    const settings = chatSettings(runtime);
    const messages: ModelMessage[] = [{ role: "user", content: "Refund INV-7: 20 now and 500 after review." }];

    const first = await generateText({ model, ...settings, messages });
    const request = first.content.find((part) => part.type === "tool-approval-request");
    expect(request).toMatchObject({
      reason: expect.stringContaining('billing.refund({"invoice":"INV-7","amount":500})'),
    });
    messages.push(...first.responseMessages, {
      role: "tool",
      content: [{ type: "tool-approval-response", approvalId: request!.approvalId, approved: true }],
    });
    await generateText({ model, ...settings, messages });

    expect(refunds).toEqual([
      { invoice: "INV-7", amount: 20 },
      { invoice: "INV-7", amount: 500 },
    ]);
    expect(lastToolResultValue(prompts.at(-1)!)).toMatchObject({
      status: "completed",
      result: { small: 20, large: 500 },
    });
  });
});
