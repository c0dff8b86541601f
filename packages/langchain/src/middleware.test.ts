import { HumanMessage, ToolMessage } from "@langchain/core/messages";
import { Command } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { CodemodeResumeError, resumeCodemodeApproval } from "./middleware.js";
import {
  agentFor,
  agentWith,
  type Interrupted,
  lastToolMessage,
  PAY_SCHEMA,
  payBothModel,
  paymentsRuntime as paymentsOn,
  requestOf,
} from "./testing/payments.js";
import { runtimesClosedAfterEach } from "./testing/runtimes.js";

/** A Code Mode pause carried by LangGraph's interrupt, resumed with Command (R-LC-2, R-AP-2). */

const runtimeWith = runtimesClosedAfterEach();
const paymentsRuntime = () => paymentsOn(runtimeWith);

const payOnce = `async () => {
  const { eur } = await payments.balance({});
  const receipt = await payments.pay({ to: "ann", eur: eur / 10 });
  return { receipt, left: eur - receipt.paid };
}`;

describe("codemodeApprovalMiddleware: interrupt and Command({ resume })", () => {
  it("R-LC-2: createAgent + MemorySaver interrupts on the pause; approving resumes the run and the model sees the real result", async () => {
    const { runtime, effects } = paymentsRuntime();
    const { agent, model } = agentFor(runtime, payOnce);
    const config = { configurable: { thread_id: "pay-1" } };

    const first = (await agent.invoke(
      { messages: [new HumanMessage("Pay Ann a tenth of the balance")] },
      config,
    )) as Interrupted;

    const request = requestOf(first);
    expect(request.actionRequests).toEqual([
      { name: "payments.pay", args: { to: "ann", eur: 50 }, description: expect.stringContaining("payments.pay") },
    ]);
    expect(request.reviewConfigs).toEqual([
      { actionName: "payments.pay", allowedDecisions: ["approve", "edit", "reject"], argsSchema: PAY_SCHEMA },
    ]);
    expect(request.pending[0]).toMatchObject({ connector: "payments", method: "pay", seq: 1 });
    expect(model.callCount).toBe(1);
    expect(effects).toEqual(["balance"]);

    const second = await agent.invoke(
      new Command({ resume: { decisions: [{ type: "approve", by: "finance" }] } }),
      config,
    );

    expect((second as Interrupted).__interrupt__).toBeUndefined();
    expect(effects).toEqual(["balance", "pay ann 50"]);
    // The model never saw the pause: its second turn got the completed run in place of it.
    const seen = model.calls[1]!.messages.filter((message) => ToolMessage.isInstance(message));
    expect(seen).toHaveLength(1);
    expect(JSON.parse(String(seen[0]!.content))).toMatchObject({
      status: "completed",
      result: { receipt: { paid: 50, to: "ann" }, left: 450 },
    });
    expect(String(second.messages.at(-1)!.content)).toContain('"left":450');
    const record = await runtime.execution(request.pending[0]!.executionId);
    expect(record?.log[1]?.decision).toMatchObject({ approved: true, by: "finance" });
  });

  it("R-LC-2: a run that pauses again interrupts again; re-runs of the node apply nothing twice", async () => {
    const { runtime, effects } = paymentsRuntime();
    const { agent, model } = agentFor(
      runtime,
      `async () => {
        const first = await payments.pay({ to: "ann", eur: 10 });
        const second = await payments.pay({ to: "bob", eur: 20 });
        return [first.to, second.to];
      }`,
    );
    const config = { configurable: { thread_id: "pay-2" } };

    const first = (await agent.invoke({ messages: [new HumanMessage("Pay both")] }, config)) as Interrupted;
    expect(requestOf(first).actionRequests[0]!.args).toEqual({ to: "ann", eur: 10 });

    const second = (await agent.invoke(
      new Command({ resume: { decisions: [{ type: "approve" }] } }),
      config,
    )) as Interrupted;
    expect(requestOf(second).actionRequests[0]!.args).toEqual({ to: "bob", eur: 20 });
    expect(effects).toEqual(["pay ann 10"]);

    // LangGraph replays the first decision when it runs the node again; the log answers it.
    const third = await agent.invoke(new Command({ resume: { decisions: [{ type: "approve" }] } }), config);
    expect(effects).toEqual(["pay ann 10", "pay bob 20"]);
    expect(model.callCount).toBe(2);
    expect(JSON.parse(String(lastToolMessage(third.messages)!.content))).toMatchObject({
      status: "completed",
      result: ["ann", "bob"],
    });
  });

  it("R-AP-9: reject denies the call; uncaught, the run ends rejected and the model is told who denied what and why", async () => {
    const { runtime, effects } = paymentsRuntime();
    const { agent, model } = agentFor(runtime, payOnce);
    const config = { configurable: { thread_id: "pay-3" } };

    const first = await agent.invoke({ messages: [new HumanMessage("Pay Ann")] }, config);
    const result = await agent.invoke(
      new Command({ resume: { decisions: [{ type: "reject", message: "Ann was paid yesterday", by: "finance" }] } }),
      config,
    );

    expect(effects).toEqual(["balance"]);
    const seen = JSON.parse(String(lastToolMessage(model.calls[1]!.messages)!.content));
    expect(seen).toMatchObject({
      status: "error",
      error: expect.stringContaining(
        `payments.pay({"to":"ann","eur":50}) was denied by finance: Ann was paid yesterday`,
      ),
    });
    expect(String(result.messages.at(-1)!.content)).toContain("denied");
    const record = await runtime.execution(requestOf(first).pending[0]!.executionId);
    expect(record?.status).toBe("rejected");
    expect(record?.log[1]).toMatchObject({ state: "denied", decision: { approved: false, decision: "deny" } });
  });

  it("R-AP-9: a program that catches the denial goes on, and the model sees what it made of it", async () => {
    const { runtime, effects } = paymentsRuntime();
    const { agent, model } = agentFor(
      runtime,
      `async () => {
        try {
          return await payments.pay({ to: "ann", eur: 10 });
        } catch (error) {
          return { notPaid: error.name, why: error.message };
        }
      }`,
    );
    const config = { configurable: { thread_id: "pay-7" } };
    await agent.invoke({ messages: [new HumanMessage("Pay Ann")] }, config);

    await agent.invoke(new Command({ resume: { decisions: [{ type: "reject", message: "not today" }] } }), config);

    expect(effects).toEqual([]);
    expect(JSON.parse(String(lastToolMessage(model.calls[1]!.messages)!.content))).toMatchObject({
      status: "completed",
      result: { notPaid: "ApprovalDenied", why: expect.stringContaining("not today") },
    });
  });
});

describe("codemodeApprovalMiddleware: several pauses at once, none, and resume values it cannot use", () => {
  it("R-LC-2: two paused programs in one model turn are one interrupt with one decision each", async () => {
    const { runtime, effects } = paymentsRuntime();
    const { agent, model } = agentWith(runtime, payBothModel());
    const config = { configurable: { thread_id: "pay-6" } };

    const first = (await agent.invoke({ messages: [new HumanMessage("Pay both")] }, config)) as Interrupted;
    expect(requestOf(first).actionRequests.map((action) => action.args)).toEqual([
      { to: "ann", eur: 1 },
      { to: "bob", eur: 2 },
    ]);

    await agent.invoke(
      new Command({ resume: { decisions: [{ type: "approve" }, { type: "reject", message: "not Bob" }] } }),
      config,
    );

    expect(effects).toEqual(["pay ann 1"]);
    const answers = Object.fromEntries(
      model.calls[1]!.messages.filter((message): message is ToolMessage => ToolMessage.isInstance(message)).map(
        (message) => [message.tool_call_id, JSON.parse(String(message.content)).status],
      ),
    );
    // Bob's program did not catch the denial: its run ended rejected, an error for the model.
    expect(answers).toEqual({ call_ann: "completed", call_bob: "error" });
  });

  it("runs without interrupting when nothing pauses", async () => {
    const { runtime } = paymentsRuntime();
    const { agent } = agentFor(runtime, `async () => (await payments.balance({})).eur`);
    const result = await agent.invoke(
      { messages: [new HumanMessage("Balance?")] },
      { configurable: { thread_id: "pay-4" } },
    );
    expect((result as Interrupted).__interrupt__).toBeUndefined();
    expect(JSON.parse(String(lastToolMessage(result.messages)!.content))).toMatchObject({
      status: "completed",
      result: 500,
    });
  });

  it("answers a resume value it cannot use with the same request and the reason; the next answer counts", async () => {
    const { runtime, effects } = paymentsRuntime();
    const { agent } = agentFor(runtime, payOnce);
    const config = { configurable: { thread_id: "pay-5" } };
    await agent.invoke({ messages: [new HumanMessage("Pay Ann")] }, config);

    const edited = await agent.invoke(new Command({ resume: { decisions: [{ type: "edit" }] } }), config);
    expect(requestOf(edited).error).toMatch(/an edit needs editedAction: \{ args \}/);
    expect(requestOf(edited).actionRequests[0]!.name).toBe("payments.pay");
    const unknown = await agent.invoke(new Command({ resume: { decisions: [{ type: "maybe" }] } }), config);
    expect(requestOf(unknown).error).toMatch(/must be \{ type: "approve" \}/);
    const empty = (await agent.invoke(new Command({ resume: { decisions: [] } }), config)) as Interrupted;
    expect(requestOf(empty).error).toMatch(/holding 1 decision/);
    expect(effects).toEqual(["balance"]);

    const approved = await agent.invoke(new Command({ resume: { decisions: [{ type: "approve" }] } }), config);
    expect(effects).toEqual(["balance", "pay ann 50"]);
    expect(JSON.parse(String(lastToolMessage(approved.messages)!.content))).toMatchObject({ status: "completed" });
  });
});

describe("resumeCodemodeApproval", () => {
  it("resumes a thread that waits on a Code Mode approval, as Command({ resume }) does", async () => {
    const { runtime, effects } = paymentsRuntime();
    const { agent } = agentFor(runtime, payOnce);
    const config = { configurable: { thread_id: "resume-1" } };
    requestOf((await agent.invoke({ messages: [new HumanMessage("Pay Ann")] }, config)) as Interrupted);

    const done = await resumeCodemodeApproval(agent, { decisions: [{ type: "approve" }] }, config);
    expect(done.messages.at(-1)!.content).toContain('"status":"completed"');
    expect(effects).toEqual(["balance", "pay ann 50"]);
  });

  it("after a restart with a new MemorySaver it says the checkpointer lost the thread, instead of returning { messages: [] }", async () => {
    const { runtime, effects } = paymentsRuntime();
    const config = { configurable: { thread_id: "lost-1" } };
    requestOf(
      (await agentFor(runtime, payOnce).agent.invoke(
        { messages: [new HumanMessage("Pay Ann")] },
        config,
      )) as Interrupted,
    );

    // What LangGraph does by itself: nothing, silently.
    const { agent: restarted } = agentFor(runtime, payOnce);
    expect(await restarted.invoke(new Command({ resume: { decisions: [{ type: "approve" }] } }), config)).toEqual({
      messages: [],
    });

    const error = await resumeCodemodeApproval(restarted, { decisions: [{ type: "approve" }] }, config).catch(
      (caught: unknown) => caught,
    );
    expect(CodemodeResumeError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ code: "NO_CHECKPOINT", message: expect.stringContaining("MemorySaver") });
    expect((error as Error).message).toContain("PostgresSaver");
    expect(effects).toEqual(["balance"]);
  });

  it("a thread already resumed says it waits on no interrupt", async () => {
    const { runtime } = paymentsRuntime();
    const { agent } = agentFor(runtime, payOnce);
    const config = { configurable: { thread_id: "twice-1" } };
    await agent.invoke({ messages: [new HumanMessage("Pay Ann")] }, config);
    await resumeCodemodeApproval(agent, { decisions: [{ type: "approve" }] }, config);
    await expect(resumeCodemodeApproval(agent, { decisions: [{ type: "approve" }] }, config)).rejects.toMatchObject({
      code: "NO_INTERRUPT",
    });
  });
});
