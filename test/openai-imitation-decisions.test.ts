import { syncApprovals } from "@codemode/ai-sdk";
import { describe, expect, it } from "vitest";
import { createShop } from "../packages/ai-sdk/src/testing/shop.ts";
import { chatTurn, imitationForFile, textOf, user } from "./openai-imitation/chat.ts";
import { mugAndPenCatchingProgram, mugAndPenModel } from "./openai-imitation/denial-model.ts";
import { resultsShown } from "./openai-imitation/shop-model.ts";

const file = imitationForFile(mugAndPenModel);

describe.each(file.apis)("an order placed beside an order denied, through @ai-sdk/openai ($api API)", ({ model }) => {
  it("R-AP-9: Promise.all of two gated orders, the mug approved and the pen denied: the model's next request shows the mug placed and the pen denied, and it says both", async () => {
    const { runtime, orders } = file.track(createShop());
    const first = user("u1", "Please order a logo mug and three blue pens.");
    const assistant = await chatTurn(model(), runtime, [first]);
    expect(assistant.parts.find((part) => part.type === "tool-codemode")).toMatchObject({
      state: "approval-requested",
      input: { code: mugAndPenCatchingProgram },
    });

    const [mug, pen] = (await runtime.pending()).items;
    const { executionId } = mug!;
    await runtime.decide({
      executionId,
      by: "dana",
      decisions: [
        { seq: mug!.seq, decision: "approve" },
        { seq: pen!.seq, decision: "deny", reason: "pens are out of stock" },
      ],
    });
    expect(orders).toEqual([{ sku: "mug-logo", quantity: 1 }]);

    const conversation = [first, assistant, user("u2", "Did my orders go through?")];
    const answer = await chatTurn(model(), runtime, await syncApprovals(conversation, runtime));

    const denial = 'shop.create_order({"sku":"pen-blue","quantity":3}) was denied by dana: pens are out of stock';
    expect(resultsShown(file.imitation.requests.at(-1)!.items)).toEqual([
      {
        status: "completed",
        executionId,
        // All the program itself could say: Promise.all rejected on the pen.
        result: { denied: denial },
        decided: [
          {
            seq: mug!.seq,
            call: "shop.create_order",
            args: { sku: "mug-logo", quantity: 1 },
            decision: "approved",
            by: "dana",
            outcome: "ran",
            result: '{"orderId":"ord-1","sku":"mug-logo","quantity":1}',
          },
          {
            seq: pen!.seq,
            call: "shop.create_order",
            args: { sku: "pen-blue", quantity: 3 },
            decision: "denied",
            by: "dana",
            reason: "pens are out of stock",
            outcome: "denied",
          },
        ],
      },
    ]);
    expect(textOf(answer)).toBe(
      'placed {"sku":"mug-logo","quantity":1}: {"orderId":"ord-1","sku":"mug-logo","quantity":1}; denied {"sku":"pen-blue","quantity":3} by dana (pens are out of stock)',
    );
    expect(orders).toEqual([{ sku: "mug-logo", quantity: 1 }]);
  });
});
