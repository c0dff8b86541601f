/**
 * The chat's old answer after a crash, through the real `@ai-sdk/openai` provider against the
 * local OpenAI imitation (R-AP-9): the user approves a charge in the chat and types on; the host
 * then dies inside that charge (`onInterrupted: "ask"`) and the run asks about it again. The
 * browser sends its conversation again, the old signed approval in it: it decides nothing, the
 * card is not charged twice, and what the provider is sent says why.
 */
import { syncApprovals } from "@codemode/ai-sdk";
import { createCodemodeRuntime } from "@codemode/core";
import Keyv from "keyv";
import { describe, expect, it } from "vitest";
import { answerApprovals, chatTurn, imitationForFile, user } from "./openai-imitation/chat.ts";
import type { Item, Reply } from "./openai-imitation/server.ts";
import { resultsShown } from "./openai-imitation/shop-model.ts";
import { cardCharger, crashInside } from "./pause-fixtures.ts";

const CHARGE_TWO = `async () => [(await payments.charge({ card: "visa" })).charged, (await payments.charge({ card: "amex" })).charged]`;

/** Asked to charge, it writes the program; after a result, it reports its status. */
function chargingModel(items: Item[]): Reply {
  const last = items.at(-1);
  if (last?.type === "result") return { text: `status: ${(JSON.parse(last.output) as { status?: string }).status}` };
  const question = items.findLast((item) => item.type === "text" && item.role === "user");
  if (question?.type === "text" && /charge/i.test(question.text))
    return { call: { name: "codemode", arguments: { code: CHARGE_TWO } } };
  return { text: "ok" };
}

const file = imitationForFile(chargingModel);

describe.each(file.apis)("the chat's old answer after a crash, through @ai-sdk/openai ($api API)", ({ model }) => {
  it("R-AP-9: the browser's old signed approval, resent after the call was asked again, decides nothing; the provider is told why", async () => {
    const { connector: payments, charged } = cardCharger();
    const keyv = new Keyv();
    const { runtime } = file.track({
      runtime: createCodemodeRuntime({
        connectors: [payments],
        storage: keyv,
        approvalSecret: "0123456789abcdef0123456789abcdef-imitation",
        logger: { warn() {} },
      }),
    });
    const first = user("u1", "Charge both cards.");
    const assistant = await chatTurn(model(), runtime, [first]);
    const approved = answerApprovals(assistant, "tool-codemode", true);
    // Approve clicked, then the user typed on: visa is charged; the run waits at amex.
    await chatTurn(model(), runtime, await syncApprovals([first, approved, user("u2", "Thanks.")], runtime));
    expect(charged).toEqual(["visa"]);

    // The host died inside visa's charge; amex is approved on the operator's page; visa is asked again.
    const executionId = (await runtime.pending()).items[0]!.executionId;
    await crashInside(keyv, executionId, 0);
    expect(await runtime.approve({ executionId, seq: 1, by: "ops" })).toMatchObject({
      status: "paused",
      pending: [{ seq: 0, pauseId: "0.2" }],
    });

    // The browser sends the old conversation again, its old answer in it.
    await chatTurn(model(), runtime, await syncApprovals([first, approved, user("u3", "Did it work?")], runtime));
    expect(charged).toEqual(["visa"]);
    expect(resultsShown(file.imitation.requests.at(-1)!.items)).toEqual([
      expect.objectContaining({
        status: "error",
        code: "NOT_PAUSED",
        error: expect.stringContaining("was asked again after this approval request was answered"),
      }),
    ]);
  });
});
