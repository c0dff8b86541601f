import {
  convertToModelMessages,
  generateText,
  type ModelMessage,
  readUIMessageStream,
  stepCountIs,
  streamText,
  ToolLoopAgent,
  type UIMessage,
} from "ai";
import { describe, expect, it } from "vitest";
import { codemodeToolApproval } from "./codemode-tool-approval.js";
import { createCodemodeTool } from "./create-codemode-tool.js";
import { answer, approvalRequests, chatSettings } from "./testing/approvals.js";
import { runtimesClosedAfterEach } from "./testing/runtimes.js";
import { lastToolResultValue, scriptedModel } from "./testing/scripted-model.js";
import { orderMugs, searchMugs } from "./testing/shop.js";

/** A Code Mode pause as an AI SDK tool approval, approved in generateText, streamText, useChat and ToolLoopAgent. */

const { shop } = runtimesClosedAfterEach();

describe("codemodeToolApproval", () => {
  it("R-AI-1 R-LC-2: a pause becomes a tool-approval-request; approving it resumes the run and the model sees the real result", async () => {
    const { runtime, orders } = shop();
    const { model, prompts } = scriptedModel([
      { code: orderMugs },
      (prompt) => ({ text: `Ordered: ${JSON.stringify(lastToolResultValue(prompt))}` }),
    ]);
    const messages: ModelMessage[] = [{ role: "user", content: "Order two mugs." }];

    const first = await generateText({ model, ...chatSettings(runtime), messages });
    const [request] = approvalRequests(first.content);
    expect(request).toMatchObject({
      toolCall: { toolName: "codemode", input: { code: orderMugs } },
      reason: expect.stringMatching(
        /^Approve shop\.create_order\(\{"sku":"mug-logo","quantity":2\}\)\? \[codemode execution /,
      ),
    });
    expect(orders).toEqual([]);
    expect(prompts).toHaveLength(1);

    messages.push(...first.responseMessages, answer(request!, true, "fine by me"));
    const second = await generateText({ model, ...chatSettings(runtime), messages });

    expect(orders).toEqual([{ sku: "mug-logo", quantity: 2 }]);
    expect(prompts).toHaveLength(2);
    const shown = lastToolResultValue(prompts[1]!);
    expect(shown).toMatchObject({ status: "completed", result: { orderId: "ord-1", total: 18 } });
    expect(second.text).toBe(`Ordered: ${JSON.stringify(shown)}`);
    // One execution: the approval function's run is the one the approval resumed.
    const [execution] = (await runtime.executions()).items;
    expect((await runtime.executions()).items).toHaveLength(1);
    expect(
      (await runtime.execution(execution!.id))?.log.find((entry) => entry.method === "create_order")?.decision,
    ).toMatchObject({ approved: true, reason: "fine by me" });
  });

  it("R-AP-3: a continuation sent twice (a client retry) runs the approved call once and shows the same result", async () => {
    const { runtime, orders } = shop();
    const { model, prompts } = scriptedModel([{ code: orderMugs }, { text: "Done." }, { text: "Done again." }]);
    const messages: ModelMessage[] = [{ role: "user", content: "Order two mugs." }];
    const first = await generateText({ model, ...chatSettings(runtime), messages });
    messages.push(...first.responseMessages, answer(approvalRequests(first.content)[0]!, true));

    await generateText({ model, ...chatSettings(runtime), messages });
    await generateText({ model, ...chatSettings(runtime), messages });

    expect(orders).toHaveLength(1);
    expect(lastToolResultValue(prompts[2]!)).toMatchObject({
      status: "completed",
      result: { orderId: "ord-1", total: 18 },
    });
  });

  it("R-AI-1: the same approval loop through streamText", async () => {
    const { runtime, orders } = shop();
    const { model, prompts } = scriptedModel([{ code: orderMugs }, { text: "Done." }]);
    const messages: ModelMessage[] = [{ role: "user", content: "Order two mugs." }];

    const first = streamText({ model, ...chatSettings(runtime), messages });
    const [request] = approvalRequests(await first.content);
    messages.push(...(await first.responseMessages), answer(request!, true));
    const second = streamText({ model, ...chatSettings(runtime), messages });

    expect(await second.text).toBe("Done.");
    expect(orders).toEqual([{ sku: "mug-logo", quantity: 2 }]);
    expect(lastToolResultValue(prompts[1]!)).toMatchObject({ status: "completed", result: { orderId: "ord-1" } });
  });

  it("R-AI-1: the approval survives a useChat round trip: UI message stream, approve in the browser, convertToModelMessages", async () => {
    const { runtime, orders } = shop();
    const { model } = scriptedModel([{ code: orderMugs }, { text: "Done." }]);
    const user: UIMessage = { id: "u1", role: "user", parts: [{ type: "text", text: "Order two mugs." }] };

    const first = streamText({ model, ...chatSettings(runtime), messages: await convertToModelMessages([user]) });
    let assistant: UIMessage | undefined;
    for await (const message of readUIMessageStream({ stream: first.toUIMessageStream() })) assistant = message;
    const requested = assistant!.parts.find((part) => part.type === "tool-codemode") as {
      state: string;
      approval: { id: string; requestReason?: string };
    };
    expect(requested).toMatchObject({
      state: "approval-requested",
      approval: { requestReason: expect.stringContaining("shop.create_order") },
    });

    // What useChat's addToolApprovalResponse does to the part when the user clicks "approve".
    const parts = assistant!.parts.map((part) =>
      part === (requested as unknown)
        ? { ...requested, state: "approval-responded", approval: { ...requested.approval, approved: true } }
        : part,
    );
    const answered = [user, { ...assistant!, parts } as UIMessage];
    const second = streamText({
      model,
      ...chatSettings(runtime),
      messages: await convertToModelMessages(answered, { tools: chatSettings(runtime).tools }),
    });

    expect(await second.text).toBe("Done.");
    expect(orders).toEqual([{ sku: "mug-logo", quantity: 2 }]);
  });

  it("R-AI-1: the same approval loop through ToolLoopAgent", async () => {
    const { runtime, orders } = shop();
    const { model } = scriptedModel([{ code: orderMugs }, { text: "Done." }]);
    const agent = new ToolLoopAgent({ model, ...chatSettings(runtime) });
    const messages: ModelMessage[] = [{ role: "user", content: "Order two mugs." }];

    const first = await agent.generate({ messages });
    messages.push(...first.responseMessages, answer(approvalRequests(first.content)[0]!, true));
    const second = await agent.generate({ messages });

    expect(second.text).toBe("Done.");
    expect(orders).toEqual([{ sku: "mug-logo", quantity: 2 }]);
  });
});

describe("codemodeToolApproval: where it does not apply, and how it is passed", () => {
  it("R-AI-1: code that does not pause runs once, with no approval request", async () => {
    const { runtime } = shop();
    const { model, prompts } = scriptedModel([{ code: searchMugs }, { text: "One mug." }]);
    const result = await generateText({ model, ...chatSettings(runtime), prompt: "Mugs?" });

    expect(approvalRequests(result.content)).toEqual([]);
    expect(result.text).toBe("One mug.");
    expect(lastToolResultValue(prompts[1]!)).toMatchObject({ status: "completed", result: ["mug-logo"] });
    expect((await runtime.executions()).items).toHaveLength(1);
  });

  it("works as the generic toolApproval function too; other tools' calls are not-applicable", async () => {
    const { runtime, orders } = shop();
    // The application named the tool run_program: the function knows it by the tool, not the name.
    const tools = { run_program: createCodemodeTool(runtime) };
    const messages: ModelMessage[] = [{ role: "user", content: "Order two mugs." }];
    const { model: named } = scriptedModel([{ code: orderMugs, toolName: "run_program" }, { text: "Done." }]);
    const asked = await generateText({
      model: named,
      tools,
      toolApproval: codemodeToolApproval(runtime),
      stopWhen: stepCountIs(5),
      messages,
    });
    const [request] = approvalRequests(asked.content);
    expect(request?.reason).toContain("shop.create_order");
    messages.push(...asked.responseMessages, answer(request!, true));
    const done = await generateText({
      model: named,
      tools,
      toolApproval: codemodeToolApproval(runtime),
      stopWhen: stepCountIs(5),
      messages,
    });
    expect(done.text).toBe("Done.");
    expect(orders).toHaveLength(1);

    const approve = codemodeToolApproval(runtime);
    expect(
      await approve({
        toolCall: { toolName: "other", toolCallId: "x", input: {} },
        tools: { other: {} },
        messages: [],
      }),
    ).toBe("not-applicable");
  });

  it("called the wrong way, it says how to pass it", async () => {
    const { runtime } = shop();
    const approve = codemodeToolApproval(runtime) as unknown as (...args: unknown[]) => Promise<unknown>;
    await expect(approve({ code: "async () => 1" })).rejects.toThrow(
      /toolApproval: \{ codemode: codemodeToolApproval\(runtime\) \}.*called with \(\{ code \}\)/,
    );
  });
});
