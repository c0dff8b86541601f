import { type CodemodeRuntime, createCodemodeRuntime, defineConnector } from "@codemode/core";
import Keyv from "keyv";
import { describe, expect, it } from "vitest";
import { syncApprovals } from "./sync-approvals.js";
import { runtimesClosedAfterEach } from "./testing/runtimes.js";
import { scriptedModel } from "./testing/scripted-model.js";
import { chatTurn, clicked, codemodePart, user } from "./testing/ui-chat.js";

/**
 * The chat's answer answers one pause (R-AP-9): the browser sends its whole conversation back,
 * old answers included. Once a call was asked again — a host died inside it after it was
 * approved (`onInterrupted: "ask"`) — the old signed answer still verifies as the server's, but it
 * answers a pause the call has left: it decides nothing, the part says so, and the log says so.
 */
const { closeAfterTest } = runtimesClosedAfterEach();

const CHARGE_TWO = `async () => {
  const visa = await payments.charge({ card: "visa" });
  const amex = await payments.charge({ card: "amex" });
  return [visa.charged, amex.charged];
}`;

function paymentsRuntime(keyv: Keyv, said: string[]): { runtime: CodemodeRuntime; charged: string[] } {
  const charged: string[] = [];
  const payments = defineConnector({
    name: "payments",
    tools: {
      charge: {
        requiresApproval: true,
        onInterrupted: "ask",
        execute: (args: { card: string }) => {
          charged.push(args.card);
          return { charged: args.card };
        },
      },
    },
  });
  const runtime = createCodemodeRuntime({
    connectors: [payments],
    storage: keyv,
    approvalSecret: "0123456789abcdef0123456789abcdef-sync-pauses",
    logger: { warn: (message) => said.push(message) },
  });
  return { runtime: closeAfterTest(runtime), charged };
}

describe("syncApprovals and the pause an answer is for (R-AP-9)", () => {
  it("R-AP-9: the browser's old signed approval, sent again after the call was asked again (a crash inside it), decides nothing and says why", async () => {
    const keyv = new Keyv();
    const said: string[] = [];
    const { runtime, charged } = paymentsRuntime(keyv, said);
    const { model } = scriptedModel([{ code: CHARGE_TWO }]);
    const first = user("u1", "Charge both cards.");
    const assistant = await chatTurn(model, runtime, [first]);
    expect(codemodePart(assistant).approval?.requestReason).toMatch(/ seq 0\.1 sig /);

    // Approve clicked, then the user typed on: the answer is applied; visa is charged, the run waits at amex.
    const answered = clicked(assistant, true);
    const synced = await syncApprovals([first, answered, user("u2", "Thanks.")], runtime);
    expect(charged).toEqual(["visa"]);
    expect(codemodePart(synced[1]!)).toMatchObject({ output: { status: "paused", pending: [{ seq: 1 }] } });
    const executionId = (await runtime.pending()).items[0]!.executionId;

    // The host died inside visa's charge; amex approved on the operator's page; visa is asked again.
    const key = `cm:default:e:${executionId}:0`;
    const entry = JSON.parse((await keyv.get(key)) as string) as Record<string, unknown>;
    await keyv.set(key, JSON.stringify({ ...entry, state: "executing", result: undefined }));
    const again = await runtime.approve({ executionId, seq: 1, by: "ops" });
    expect(again).toMatchObject({ status: "paused", pending: [{ seq: 0, pauseId: "0.2" }] });

    // The browser sends the old conversation again, its old answer in it.
    const resent = await syncApprovals([first, answered, user("u3", "Did it work?")], runtime);
    expect(charged).toEqual(["visa"]);
    expect(codemodePart(resent[1]!)).toMatchObject({
      state: "output-available",
      output: {
        status: "error",
        code: "NOT_PAUSED",
        error: expect.stringContaining("was asked again after this approval request was answered"),
      },
    });
    expect(said).toEqual([expect.stringContaining("[codemode] a chat's approval was refused: payments.charge (seq 0")]);
    expect((await runtime.execution(executionId))?.log[0]).toMatchObject({ state: "pending", pauseId: "0.2" });
  });
});
