import { generateText, type ModelMessage } from "ai";
import { describe, expect, it } from "vitest";
import { continueAfterApproval } from "./approval-messages.js";
import { rejectDeniedExecutions } from "./codemode-tool-approval.js";
import { answer, approvalRequests, chatSettings } from "./testing/approvals.js";
import { outageStore } from "./testing/outage-store.js";
import { runtimesClosedAfterEach } from "./testing/runtimes.js";
import { lastToolResultValue, scriptedModel, toolResultsIn } from "./testing/scripted-model.js";
import { divergingOrder, orderMugs, orderTwice } from "./testing/shop.js";

/** What the model reads when an answered approval does not simply complete the run. */

const { shop } = runtimesClosedAfterEach();

describe("codemodeToolApproval: denials, second pauses, divergence and outages reach the model as tool results", () => {
  it("R-AP-4: a denied request ends the execution rejected; the model sees the denial; nothing is ordered", async () => {
    const { runtime, orders } = shop();
    const { model, prompts } = scriptedModel([{ code: orderMugs }, { text: "Understood, no order." }]);
    const messages: ModelMessage[] = [{ role: "user", content: "Order two mugs." }];
    const first = await generateText({ model, ...chatSettings(runtime), messages });
    messages.push(...first.responseMessages, answer(approvalRequests(first.content)[0]!, false, "too expensive"));

    const rejected = await rejectDeniedExecutions(runtime, messages, { by: "ann" });
    const second = await generateText({ model, ...chatSettings(runtime), messages });

    expect(second.text).toBe("Understood, no order.");
    expect(orders).toEqual([]);
    expect(toolResultsIn(prompts[1]!).at(-1)?.output).toEqual({ type: "execution-denied", reason: "too expensive" });
    expect(rejected).toHaveLength(1);
    expect(await runtime.execution(rejected[0]!)).toMatchObject({ status: "rejected" });
    expect(await rejectDeniedExecutions(runtime, [...messages, ...second.responseMessages])).toEqual([]);
  });

  it("R-AP-2 R-LC-2: a second pause after approval is a paused tool result; continueAfterApproval finishes the conversation", async () => {
    const { runtime, orders } = shop();
    const { model, prompts } = scriptedModel([
      { code: orderTwice },
      { text: "The second order waits for approval." },
      (prompt) => ({ text: `Both: ${JSON.stringify(lastToolResultValue(prompt))}` }),
    ]);
    const messages: ModelMessage[] = [{ role: "user", content: "Order a mug and three pens." }];
    const first = await generateText({ model, ...chatSettings(runtime), messages });
    messages.push(...first.responseMessages, answer(approvalRequests(first.content)[0]!, true));
    const second = await generateText({ model, ...chatSettings(runtime), messages });

    expect(orders).toHaveLength(1);
    const paused = lastToolResultValue(prompts[1]!) as {
      status: string;
      executionId: string;
      pending: Array<{ seq: number }>;
    };
    expect(paused).toMatchObject({
      status: "paused",
      pending: [{ method: "create_order", args: { sku: "pen-blue", quantity: 3 } }],
    });

    const outcome = await runtime.approve({ executionId: paused.executionId, seq: paused.pending[0]!.seq });
    await generateText({
      model,
      ...chatSettings(runtime),
      messages: continueAfterApproval([...messages, ...second.responseMessages], outcome),
    });

    expect(orders).toHaveLength(2);
    expect(lastToolResultValue(prompts[2]!)).toMatchObject({ status: "completed", result: ["ord-1", "ord-2"] });
  });

  it("R-RP-2: a replay divergence after approval reaches the model as a tool result, not an exception", async () => {
    const { runtime, orders } = shop();
    const { model, prompts } = scriptedModel([
      { code: divergingOrder },
      { text: "The run diverged; I will use codemode.step." },
    ]);
    const messages: ModelMessage[] = [{ role: "user", content: "Order as many mugs as in stock." }];
    const first = await generateText({ model, ...chatSettings(runtime), messages });
    messages.push(...first.responseMessages, answer(approvalRequests(first.content)[0]!, true));

    const second = await generateText({ model, ...chatSettings(runtime), messages });

    expect(second.text).toBe("The run diverged; I will use codemode.step.");
    expect(orders).toEqual([]);
    expect(lastToolResultValue(prompts[1]!)).toMatchObject({
      status: "error",
      code: "REPLAY_DIVERGENCE",
      error: expect.stringContaining("codemode.step"),
    });
  });

  it("R-RT-3: an approval that meets a store outage reaches the model as STORAGE_ERROR, never NOT_FOUND, and nothing is ordered", async () => {
    const { keyv, state } = outageStore();
    const { runtime, orders } = shop(keyv as never);
    const { model, prompts } = scriptedModel([{ code: orderMugs }, { text: "The store is down." }]);
    const messages: ModelMessage[] = [{ role: "user", content: "Order two mugs." }];
    const first = await generateText({ model, ...chatSettings(runtime), messages });
    messages.push(...first.responseMessages, answer(approvalRequests(first.content)[0]!, true));
    state.down = true;
    await generateText({ model, ...chatSettings(runtime), messages });
    state.down = false;
    expect(orders).toEqual([]);
    expect(lastToolResultValue(prompts[1]!)).toMatchObject({ status: "error", code: "STORAGE_ERROR" });
  });
});
