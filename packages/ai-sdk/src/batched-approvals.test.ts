import { approvalReasonText, readPauseReference } from "@codemode/core/adapters";
import { generateText, type ModelMessage } from "ai";
import { describe, expect, it } from "vitest";
import { rejectDeniedExecutions } from "./codemode-tool-approval.js";
import { syncModelApprovals } from "./sync-model-approvals.js";
import { answer, approvalRequests, chatSettings } from "./testing/approvals.js";
import { runtimesClosedAfterEach } from "./testing/runtimes.js";
import { lastToolResultValue, type Prompt, scriptedModel, toolResultsIn } from "./testing/scripted-model.js";
import { orderBoth, orderThreeSettled, type Shop, THREE_ORDERS } from "./testing/shop.js";

/** A program that waits on several actions at once asks the chat once, for all of them (R-AP-8, R-AP-9, R-AP-11). */

const { shop } = runtimesClosedAfterEach();

/** The first turn: the model writes `code`, the run pauses, the AI SDK asks for approval. */
async function askedFor(code: string, { runtime }: Pick<Shop, "runtime">) {
  const seen = (prompt: Prompt) => ({ text: `Seen: ${JSON.stringify(lastToolResultValue(prompt))}` });
  const { model, prompts } = scriptedModel([{ code }, seen, seen]);
  const messages: ModelMessage[] = [{ role: "user", content: "Order a mug and three pens." }];
  const first = await generateText({ model, ...chatSettings(runtime), messages });
  messages.push(...first.responseMessages);
  const requests = approvalRequests(first.content);
  expect(requests).toHaveLength(1);
  const request = requests[0]!;
  return { model, prompts, messages, request, reference: readPauseReference(request.reason)! };
}

/** The answer's request with its marker rewritten: what a hostile browser sends back. */
function withMarker(messages: ModelMessage[], rewrite: (reason: string) => string): ModelMessage[] {
  return messages.map((message) =>
    message.role === "assistant" && typeof message.content !== "string"
      ? {
          ...message,
          content: message.content.map((part) =>
            part.type === "tool-approval-request" ? { ...part, reason: rewrite(part.reason!) } : part,
          ),
        }
      : message,
  );
}

describe("codemodeToolApproval: a pause with several pending actions", () => {
  it("R-AP-8: one approval request lists both orders; approving it places both, each once, and the model sees both results", async () => {
    const { runtime, orders } = shop();
    const { model, prompts, messages, request, reference } = await askedFor(orderBoth, { runtime });
    expect(approvalReasonText(request.reason)).toBe(
      'Approve these 2 actions?\n1. shop.create_order({"sku":"mug-logo","quantity":1})\n2. shop.create_order({"sku":"pen-blue","quantity":3})',
    );
    expect(reference).toMatchObject({ seq: 0, seqs: [0, 1], signature: expect.stringMatching(/^[\w-]{43}$/) });
    expect(orders).toEqual([]);

    messages.push(answer(request, true, "both fine"));
    await generateText({ model, ...chatSettings(runtime), messages });
    await generateText({ model, ...chatSettings(runtime), messages }); // a client retry: nothing runs twice

    expect(orders).toHaveLength(2);
    expect(lastToolResultValue(prompts[2]!)).toEqual(lastToolResultValue(prompts[1]!));
    expect(lastToolResultValue(prompts[1]!)).toMatchObject({
      status: "completed",
      result: [
        { sku: "mug-logo", quantity: 1 },
        { sku: "pen-blue", quantity: 3 },
      ],
    });
    const log = (await runtime.execution(reference.executionId))?.log;
    expect(log?.map((entry) => [entry.state, entry.decision?.decision, entry.decision?.reason])).toEqual([
      ["applied", "approve", "both fine"],
      ["applied", "approve", "both fine"],
    ]);
  });

  it("R-AP-9: denying the request denies every action shown, with the reason, through runtime.decide: the program catches ApprovalDenied and goes on; nothing is ordered", async () => {
    const { runtime, orders } = shop();
    const { messages, request, reference } = await askedFor(orderThreeSettled, { runtime });
    expect(reference.seqs).toEqual([0, 1, 2]);
    messages.push(answer(request, false, "not today"));

    expect(await rejectDeniedExecutions(runtime, messages, { by: "ann" })).toEqual([reference.executionId]);

    expect(orders).toEqual([]);
    const denial = (args: string) => `ApprovalDenied: shop.create_order(${args}) was denied by ann: not today`;
    expect(await runtime.outcome(reference.executionId)).toMatchObject({
      status: "completed",
      result: THREE_ORDERS.map(denial),
    });
    // Answered again (a retry), it is answered from the log: the same executions, nothing else.
    expect(await rejectDeniedExecutions(runtime, messages, { by: "ann" })).toEqual([reference.executionId]);
  });

  it("R-AP-9: syncModelApprovals applies a denial answered in the last turn before the next generation, as rejectDeniedExecutions did; the SDK reports it", async () => {
    const { runtime, orders } = shop();
    const { model, prompts, messages, request, reference } = await askedFor(orderBoth, { runtime });
    messages.push(answer(request, false, "too many"));
    await generateText({ model, ...chatSettings(runtime), messages: await syncModelApprovals(messages, runtime) });
    expect(toolResultsIn(prompts[1]!).at(-1)?.output).toEqual({ type: "execution-denied", reason: "too many" });
    expect(await runtime.execution(reference.executionId)).toMatchObject({ status: "rejected" });
    expect(orders).toEqual([]);
  });

  it("R-AP-9: syncModelApprovals applies a denial nobody sent to every action shown; the model reads what the program did next", async () => {
    const { runtime, orders } = shop();
    const { model, prompts, messages, request } = await askedFor(orderThreeSettled, { runtime });
    messages.push(answer(request, false, "never mind"), { role: "user", content: "Forget it." });

    await generateText({ model, ...chatSettings(runtime), messages: await syncModelApprovals(messages, runtime) });

    const denial = (args: string) => `ApprovalDenied: shop.create_order(${args}) was denied: never mind`;
    expect(lastToolResultValue(prompts[1]!)).toMatchObject({ status: "completed", result: THREE_ORDERS.map(denial) });
    expect(orders).toEqual([]);
  });

  it("R-AP-9: a denial the program does not catch ends the run rejected", async () => {
    const { runtime, orders } = shop();
    const { model, prompts, messages, request, reference } = await askedFor(orderBoth, { runtime });
    messages.push(answer(request, false, "too many"));
    await rejectDeniedExecutions(runtime, messages);
    await generateText({ model, ...chatSettings(runtime), messages });
    expect(toolResultsIn(prompts[1]!).at(-1)?.output).toEqual({ type: "execution-denied", reason: "too many" });
    expect(await runtime.execution(reference.executionId)).toMatchObject({ status: "rejected" });
    expect(orders).toEqual([]);
  });
});

describe("codemodeToolApproval: an answer decides exactly the actions the server showed (R-AP-11)", () => {
  it("R-AP-11: a set altered in the browser (fewer or more seqs, other pauses, pauses left out, under the same signature) is refused and nothing runs", async () => {
    const { runtime, orders } = shop();
    const asked = await askedFor(orderBoth, { runtime });
    expect(withMarker(asked.messages, (reason) => reason)).toEqual(asked.messages);
    for (const seqs of ["0.1", "1.1", "0.1,1.1,2.1", "0.2,1.1", "0,1"]) {
      const forged = withMarker(asked.messages, (reason) => {
        expect(reason).toMatch(/ seq 0\.1,1\.1 /);
        return reason.replace(/ seq 0\.1,1\.1 /, ` seq ${seqs} `);
      });
      const { model, prompts } = scriptedModel([{ text: "Refused." }]);
      await generateText({ model, ...chatSettings(runtime), messages: [...forged, answer(asked.request, true)] });
      expect(lastToolResultValue(prompts[0]!), seqs).toMatchObject({
        status: "error",
        code: "NOT_FOUND",
        error: expect.stringContaining("was not issued by this server"),
      });
      expect(await rejectDeniedExecutions(runtime, [...forged, answer(asked.request, false)])).toEqual([]);
    }
    expect(orders).toEqual([]);
    const log = (await runtime.execution(asked.reference.executionId))?.log;
    expect(log?.map((entry) => [entry.state, entry.decision])).toEqual([
      ["pending", undefined],
      ["pending", undefined],
    ]);
  });

  it("R-AP-11: a stale request decides nothing: one of its actions was denied in the inbox first, so the chat's approval of both is refused whole", async () => {
    const { runtime, orders } = shop();
    const { model, prompts, messages, request, reference } = await askedFor(orderThreeSettled, { runtime });
    const { executionId } = reference;
    const moved = await runtime.decide({ executionId, by: "inbox", decisions: [{ seq: 1, decision: "deny" }] });
    expect(moved).toMatchObject({ status: "paused", pending: [{ seq: 0 }, { seq: 2 }] });

    messages.push(answer(request, true));
    await generateText({ model, ...chatSettings(runtime), messages });

    expect(orders).toEqual([]);
    expect(lastToolResultValue(prompts[1]!)).toMatchObject({
      status: "error",
      code: "NOT_PAUSED",
      error: expect.stringContaining("nothing was approved: the approval request showed actions 0, 1, 2 of execution"),
    });
    const log = (await runtime.execution(executionId))?.log;
    expect(log?.map((entry) => entry.state)).toEqual(["pending", "denied", "pending"]);
  });

  it("R-AP-11: the request shows only the actions a chat may decide; approving it runs those, and the operator's stays pending", async () => {
    const { runtime, orders } = shop(undefined, {
      chatApprovals: (action) => (action.args as { quantity: number }).quantity <= 2,
    });
    const { model, prompts, messages, request, reference } = await askedFor(orderBoth, { runtime });
    expect(reference).toMatchObject({ seq: 0 });
    expect(reference.seqs).toBeUndefined();
    expect(approvalReasonText(request.reason)).toBe(
      'Approve shop.create_order({"sku":"mug-logo","quantity":1})?\n(1 more pending action is not part of this request and decided separately.)',
    );
    messages.push(answer(request, true));
    await generateText({ model, ...chatSettings(runtime), messages });
    expect(orders).toEqual([{ sku: "mug-logo", quantity: 1 }]);
    expect(lastToolResultValue(prompts[1]!)).toMatchObject({
      status: "paused",
      pending: [{ seq: 1, args: { sku: "pen-blue", quantity: 3 } }],
    });
  });
});

describe("the paused result a UI shows (R-AP-8)", () => {
  it("R-AP-8: lists every pending action with its description and input schema, so a page can offer approve, deny or edit per action", async () => {
    const { runtime } = shop();
    const { model } = scriptedModel([{ code: orderBoth }, { text: "Both wait for approval." }]);
    const result = await generateText({ model, ...chatSettings(runtime, false), prompt: "Order a mug and pens." });
    const output = result.steps[0]!.toolResults[0]!.output as { status: string; pending: unknown[] };
    const schema = {
      type: "object",
      properties: { sku: { type: "string" }, quantity: { type: "integer", minimum: 1 } },
      required: ["sku", "quantity"],
    };
    expect(output).toMatchObject({ status: "paused" });
    expect(output.pending).toEqual([
      expect.objectContaining({
        seq: 0,
        connector: "shop",
        method: "create_order",
        args: { sku: "mug-logo", quantity: 1 },
        description: "Order a quantity of one product.",
        inputSchema: expect.objectContaining(schema),
      }),
      expect.objectContaining({ seq: 1, args: { sku: "pen-blue", quantity: 3 }, inputSchema: expect.any(Object) }),
    ]);
  });
});
