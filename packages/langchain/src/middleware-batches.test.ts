import { HumanMessage } from "@langchain/core/messages";
import { Command } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { CodemodeResumeError, resumeCodemodeApproval } from "./middleware.js";
import { agentFor, lastToolMessage, paymentsRuntime, requestOf, resultsSeen } from "./testing/payments.js";
import { runtimesClosedAfterEach } from "./testing/runtimes.js";

/** A program waiting on several payments at once (R-AP-8), decided with approve, edit and reject (R-AP-9). */

const runtimeWith = runtimesClosedAfterEach();

const payBoth = `async () => {
  const [ann, bob] = await Promise.all([
    payments.pay({ to: "ann", eur: 10 }),
    payments.pay({ to: "bob", eur: 20 }),
  ]);
  return { paid: [ann, bob] };
}`;

describe("codemodeApprovalMiddleware: a batch of pending actions", () => {
  it("R-AP-8 R-AP-9: Promise.all of two payments is one interrupt with both; approve and edit run each once, and the model sees both results", async () => {
    const { runtime, effects } = paymentsRuntime(runtimeWith);
    const { agent, model } = agentFor(runtime, payBoth);
    const config = { configurable: { thread_id: "batch-1" } };

    const first = await agent.invoke({ messages: [new HumanMessage("Pay Ann and Bob")] }, config);
    const request = requestOf(first);
    expect(request.actionRequests.map((action) => [action.name, action.args])).toEqual([
      ["payments.pay", { to: "ann", eur: 10 }],
      ["payments.pay", { to: "bob", eur: 20 }],
    ]);
    expect(request.reviewConfigs.map((config) => config.allowedDecisions)).toEqual([
      ["approve", "edit", "reject"],
      ["approve", "edit", "reject"],
    ]);
    expect(request.pending.map((action) => action.seq)).toEqual([0, 1]);
    expect(effects).toEqual([]);

    const done = await agent.invoke(
      new Command({
        resume: {
          decisions: [
            { type: "approve", by: "finance" },
            { type: "edit", editedAction: { name: "payments.pay", args: { to: "bob", eur: 15 } }, by: "finance" },
          ],
        },
      }),
      config,
    );

    expect(done.__interrupt__).toBeUndefined();
    expect(effects.sort()).toEqual(["pay ann 10", "pay bob 15"]);
    expect(model.callCount).toBe(2);
    expect(resultsSeen(model, 1)).toEqual([
      expect.objectContaining({
        status: "completed",
        result: {
          paid: [
            { paid: 10, to: "ann" },
            { paid: 15, to: "bob" },
          ],
        },
      }),
    ]);
    const record = await runtime.execution(request.pending[0]!.executionId);
    expect(record?.log.map((entry) => [entry.seq, entry.decision?.decision, entry.decision?.by])).toEqual([
      [0, "approve", "finance"],
      [1, "edit", "finance"],
    ]);
    expect(record?.log[1]).toMatchObject({ args: { to: "bob", eur: 15 }, requestedArgs: { to: "bob", eur: 20 } });
  });

  it("R-AP-9: edited arguments the tool's schema refuses come back as the same request with the reason; nothing ran, and the next answer counts", async () => {
    const { runtime, effects } = paymentsRuntime(runtimeWith);
    const { agent, model } = agentFor(runtime, payBoth);
    const config = { configurable: { thread_id: "batch-2" } };
    await agent.invoke({ messages: [new HumanMessage("Pay Ann and Bob")] }, config);

    const refused = await agent.invoke(
      new Command({
        resume: { decisions: [{ type: "approve" }, { type: "edit", editedAction: { args: { to: "bob", eur: 900 } } }] },
      }),
      config,
    );
    const again = requestOf(refused);
    expect(again.error).toMatch(/^refused, so not decided: seq 1 \(payments\.pay\): Invalid arguments[\s\S]*args\.eur/);
    expect(again.pending.map((action) => action.seq)).toEqual([0, 1]);
    expect(effects).toEqual([]);
    expect((await runtime.execution(again.pending[0]!.executionId))?.log.every((entry) => !entry.decision)).toBe(true);

    await agent.invoke(
      new Command({ resume: { decisions: [{ type: "approve" }, { type: "reject", message: "not Bob" }] } }),
      config,
    );
    expect(effects).toEqual(["pay ann 10"]);
    expect(resultsSeen(model, 1)).toEqual([
      expect.objectContaining({
        status: "error",
        error: expect.stringContaining(`payments.pay({"to":"bob","eur":20}) was denied: not Bob`),
      }),
    ]);
  });

  it("R-AP-8: a run that pauses again after a batch interrupts again with the new batch; earlier decisions are never replayed onto it", async () => {
    const { runtime, effects } = paymentsRuntime(runtimeWith);
    const { agent, model } = agentFor(
      runtime,
      `async () => {
        await Promise.all([payments.pay({ to: "ann", eur: 1 }), payments.pay({ to: "bob", eur: 2 })]);
        const [cy, di] = await Promise.all([payments.pay({ to: "cy", eur: 3 }), payments.pay({ to: "di", eur: 4 })]);
        const last = await payments.pay({ to: "ed", eur: 5 });
        return [cy.to, di.to, last.to];
      }`,
    );
    const config = { configurable: { thread_id: "batch-3" } };
    const approveBoth = new Command({ resume: { decisions: [{ type: "approve" }, { type: "approve" }] } });

    await agent.invoke({ messages: [new HumanMessage("Pay everyone")] }, config);
    const second = requestOf(await agent.invoke(approveBoth, config));
    expect(second.actionRequests.map((action) => action.args)).toEqual([
      { to: "cy", eur: 3 },
      { to: "di", eur: 4 },
    ]);
    const third = requestOf(
      await agent.invoke(
        new Command({
          resume: { decisions: [{ type: "approve" }, { type: "edit", editedAction: { args: { to: "di", eur: 40 } } }] },
        }),
        config,
      ),
    );
    expect(third.actionRequests.map((action) => action.args)).toEqual([{ to: "ed", eur: 5 }]);

    const done = await agent.invoke(new Command({ resume: { decisions: [{ type: "approve" }] } }), config);
    expect(effects.sort()).toEqual(["pay ann 1", "pay bob 2", "pay cy 3", "pay di 40", "pay ed 5"]);
    expect(model.callCount).toBe(2);
    expect(JSON.parse(String(lastToolMessage(done.messages)!.content))).toMatchObject({
      status: "completed",
      result: ["cy", "di", "ed"],
    });
  });

  it("R-AP-9: decisions already applied (a crash between decide and the checkpoint) are answered from the log; nothing runs twice", async () => {
    const { runtime, effects } = paymentsRuntime(runtimeWith);
    const { agent, model } = agentFor(runtime, payBoth);
    const config = { configurable: { thread_id: "batch-4" } };
    const request = requestOf(await agent.invoke({ messages: [new HumanMessage("Pay Ann and Bob")] }, config));
    const executionId = request.pending[0]!.executionId;
    // What a process that died after runtime.decide left behind: the run went on, the thread did not.
    await runtime.decide({
      executionId,
      decisions: [
        { seq: 0, decision: "approve" },
        { seq: 1, decision: "approve" },
      ],
    });
    expect(effects.sort()).toEqual(["pay ann 10", "pay bob 20"]);

    await agent.invoke(new Command({ resume: { decisions: [{ type: "approve" }, { type: "approve" }] } }), config);

    expect(effects).toHaveLength(2);
    expect(resultsSeen(model, 1)).toEqual([expect.objectContaining({ status: "completed" })]);
  });
});

describe("resumeCodemodeApproval: decisions that do not fit the interrupt", () => {
  it("R-AP-9: a wrong number of decisions, or a malformed one, throws INVALID_DECISIONS and changes nothing", async () => {
    const { runtime, effects } = paymentsRuntime(runtimeWith);
    const { agent } = agentFor(runtime, payBoth);
    const config = { configurable: { thread_id: "batch-5" } };
    await agent.invoke({ messages: [new HumanMessage("Pay Ann and Bob")] }, config);

    const tooFew = await resumeCodemodeApproval(agent, { decisions: [{ type: "approve" }] }, config).catch(
      (caught: unknown) => caught,
    );
    expect(CodemodeResumeError.isInstance(tooFew)).toBe(true);
    expect(tooFew).toMatchObject({
      code: "INVALID_DECISIONS",
      message: expect.stringContaining("holding 2 decisions"),
    });
    const malformed = {
      decisions: [{ type: "approve" }, { type: "edit", editedAction: { name: "payments.balance", args: {} } }],
    };
    await expect(resumeCodemodeApproval(agent, malformed as never, config)).rejects.toMatchObject({
      code: "INVALID_DECISIONS",
      message: expect.stringMatching(
        /decision 1 for payments\.pay: an edit cannot change which tool runs.*Nothing was decided\.$/,
      ),
    });
    expect(effects).toEqual([]);
    const state = (await agent.getState(config)) as unknown as { tasks: Array<{ interrupts: unknown[] }> };
    expect(state.tasks.flatMap((task) => task.interrupts)).toHaveLength(1);

    const done = await resumeCodemodeApproval(
      agent,
      { decisions: [{ type: "approve" }, { type: "edit", editedAction: { args: { to: "bob", eur: 5 } } }] },
      config,
    );
    expect(effects.sort()).toEqual(["pay ann 10", "pay bob 5"]);
    expect(String(done.messages.at(-1)!.content)).toContain('"status":"completed"');
  });
});
