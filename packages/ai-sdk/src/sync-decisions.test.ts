import type { CodemodeRuntime, Decision } from "@codemode/core";
import { convertToModelMessages } from "ai";
import { describe, expect, it } from "vitest";
import { syncApprovals } from "./sync-approvals.js";
import { chatSettings } from "./testing/approvals.js";
import { runtimesClosedAfterEach } from "./testing/runtimes.js";
import { lastToolResultValue, type Prompt, scriptedModel } from "./testing/scripted-model.js";
import { orderBoth, orderThreeSettled, THREE_ORDERS } from "./testing/shop.js";
import { answeredFirstTurn, chatTurn, codemodePart, firstTurn, user } from "./testing/ui-chat.js";

/** A useChat conversation whose batched pause is decided per action, elsewhere or in the chat (R-AP-8, R-AP-9). */

const { shop } = runtimesClosedAfterEach();

const answerFromResult = (prompt: Prompt) => ({ text: `Result: ${JSON.stringify(lastToolResultValue(prompt))}` });
const denied = (reason: string) =>
  `ApprovalDenied: shop.create_order(${THREE_ORDERS[2]}) was denied by inbox: ${reason}`;

/** Decisions made in an inbox on the run that waits now. */
async function decideInInbox(runtime: CodemodeRuntime, decisions: Decision[]): Promise<void> {
  const [action] = (await runtime.pending()).items;
  await runtime.decide({ executionId: action!.executionId, by: "inbox", decisions });
}

describe("syncApprovals: decisions made per action elsewhere (an inbox, the CLI, runtime.decide)", () => {
  it("R-AP-9: one approved, one edited, one denied in the inbox: the waiting part shows the run's real outcome, and the model reads it; each order placed once", async () => {
    const { runtime, orders } = shop();
    const { model, prompts } = scriptedModel([{ code: orderThreeSettled }, answerFromResult]);
    const { first, assistant } = await firstTurn(model, runtime, "Order a mug and some pens.");
    expect(codemodePart(assistant)).toMatchObject({ state: "approval-requested" });
    await decideInInbox(runtime, [
      { seq: 0, decision: "approve" },
      { seq: 1, decision: "edit", args: { sku: "pen-blue", quantity: 2 } },
      { seq: 2, decision: "deny", reason: "nine is too many" },
    ]);
    const result = [
      { orderId: "ord-1", sku: "mug-logo", quantity: 1 },
      { orderId: "ord-2", sku: "pen-blue", quantity: 2 },
      denied("nine is too many"),
    ];

    // The page asks whether its waiting call was decided: it was, whatever keepWaiting says.
    const onPage = await syncApprovals([first, assistant], runtime, { keepWaiting: true });
    expect(codemodePart(onPage[1]!)).toMatchObject({
      state: "output-available",
      output: { status: "completed", result },
    });
    await chatTurn(model, runtime, await syncApprovals([first, assistant, user("u2", "Done?")], runtime));
    expect(lastToolResultValue(prompts[1]!)).toMatchObject({ status: "completed", result });
    expect(orders).toEqual([
      { sku: "mug-logo", quantity: 1 },
      { sku: "pen-blue", quantity: 2 },
    ]);
  });

  it("R-AP-9: a denial the program does not catch: the waiting part becomes output-denied naming the denied action and the reason", async () => {
    const { runtime, orders } = shop();
    const { model } = scriptedModel([{ code: orderBoth }]);
    const { first, assistant } = await firstTurn(model, runtime, "Order a mug and three pens.");
    await decideInInbox(runtime, [
      { seq: 0, decision: "approve" },
      { seq: 1, decision: "deny", reason: "no pens" },
    ]);
    const synced = await syncApprovals([first, assistant, user("u2", "And?")], runtime);
    expect(codemodePart(synced[1]!)).toMatchObject({
      state: "output-denied",
      approval: { approved: false, reason: expect.stringMatching(/rejected shop\.create_order.*Reason: no pens$/) },
    });
    // The approved order ran when its call was decided; the program then failed on the denial.
    expect(orders).toEqual([{ sku: "mug-logo", quantity: 1 }]);
  });

  it("R-AP-8: a paused result shows the run now once its pending actions change, and is left as it is while they do not", async () => {
    const { runtime } = shop();
    const { model } = scriptedModel([{ code: orderThreeSettled }, { text: "All three wait." }]);
    const { first, assistant } = await firstTurn(model, runtime, "Order a mug and some pens.", false);
    expect(codemodePart(assistant)).toMatchObject({
      state: "output-available",
      output: { status: "paused", pending: [{ seq: 0 }, { seq: 1 }, { seq: 2 }] },
    });
    const unchanged = await syncApprovals([first, assistant], runtime);
    expect(unchanged[1]).toBe(assistant);

    const { executionId } = codemodePart(assistant).output as { executionId: string };
    await runtime.decide({ executionId, decisions: [{ seq: 1, decision: "approve" }] });
    const synced = await syncApprovals([first, assistant], runtime);
    expect(codemodePart(synced[1]!)).toMatchObject({
      state: "output-available",
      output: { status: "paused", pending: [{ seq: 0 }, { seq: 2 }] },
    });
  });
});

describe("syncApprovals: the chat's answer covers every action its request showed (R-AP-9)", () => {
  it("R-AP-9: Reject clicked: every action is denied with the reason; the program catches it and goes on, and the part shows its outcome", async () => {
    const { runtime, orders } = shop();
    const { model, prompts } = scriptedModel([{ code: orderThreeSettled }, answerFromResult]);
    const { first, answered } = await answeredFirstTurn(model, runtime, "Order a mug and some pens.", false, "not now");

    const synced = await syncApprovals([first, answered], runtime, { by: "chat user" });

    const denial = (args: string) => `ApprovalDenied: shop.create_order(${args}) was denied by chat user: not now`;
    expect(codemodePart(synced[1]!)).toMatchObject({
      state: "output-available",
      output: { status: "completed", result: THREE_ORDERS.map(denial) },
    });
    await chatTurn(model, runtime, synced);
    expect(lastToolResultValue(prompts[1]!)).toMatchObject({ status: "completed", result: THREE_ORDERS.map(denial) });
    expect(orders).toEqual([]);
    // The page sends its answer again with the next message: nothing more is decided.
    expect(codemodePart((await syncApprovals([first, answered], runtime))[1]!)).toMatchObject({
      output: { status: "completed" },
    });
  });

  it("R-AP-9: Reject clicked on a program that does not catch the denial: the run ends rejected, and the part is left for the AI SDK to tell the model", async () => {
    const { runtime, orders } = shop();
    const { model } = scriptedModel([{ code: orderBoth }]);
    const { first, answered, action } = await answeredFirstTurn(
      model,
      runtime,
      "Order a mug and three pens.",
      false,
      "not now",
    );

    const synced = await syncApprovals([first, answered], runtime);

    expect(synced[1]).toBe(answered);
    expect(await runtime.execution(action!.executionId)).toMatchObject({ status: "rejected" });
    // What the model is then told: the AI SDK's own denial, with the reason.
    const sent = await convertToModelMessages(synced, { tools: chatSettings(runtime).tools });
    expect(sent.at(-1)).toMatchObject({
      role: "tool",
      content: [
        { type: "tool-approval-response", approved: false },
        { type: "tool-result", output: { type: "execution-denied", reason: "not now" } },
      ],
    });
    expect(orders).toEqual([]);
  });

  it("R-AP-8: Approve clicked, then the user typed on: every action shown is approved once", async () => {
    const { runtime, orders } = shop();
    const { model } = scriptedModel([{ code: orderBoth }]);
    const { first, answered } = await answeredFirstTurn(model, runtime, "Order a mug and three pens.", true);
    const conversation = [first, answered, user("u2", "Thanks!")];
    const synced = await syncApprovals(conversation, runtime, { by: "ann" });
    expect(codemodePart(synced[1]!)).toMatchObject({
      state: "output-available",
      approval: { approved: true },
      output: { status: "completed", result: [{ orderId: "ord-1" }, { orderId: "ord-2" }] },
    });
    await syncApprovals(conversation, runtime, { by: "ann" });
    expect(orders).toHaveLength(2);
  });
});
