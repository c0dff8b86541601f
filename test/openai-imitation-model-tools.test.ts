/**
 * R-CN-OA through `@ai-sdk/openai` against the local imitation of the OpenAI API: in one
 * conversation the model calls one tool directly (`tasks_getStats`, a tool of its own next to the
 * Code Mode tool), another from a program (`tasks.listTasks`), and a gated one directly
 * (`tasks_createTask`): that call becomes the AI SDK's own approval request, signed and bound to
 * its pause, and once approved the task is created once, with its idempotency key. The tools come
 * from the OpenAPI document of a real HTTP API on 127.0.0.1.
 */
import { syncApprovals } from "@codemode/ai-sdk";
import { type CodemodeRuntime, createCodemodeRuntime } from "@codemode/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { answerApprovals, chatTurn, imitationForFile, textOf, user } from "./openai-imitation/chat.ts";
import { LIST_PROGRAM, tasksConnector, tasksModel } from "./openai-imitation/tasks-model.ts";
import { startTasksApi, type TasksApi } from "./openapi/tasks-api.ts";

const file = imitationForFile(tasksModel);
let api: TasksApi;
beforeAll(async () => {
  api = await startTasksApi();
});
afterAll(async () => {
  await api.close();
});

function tasksRuntime(): CodemodeRuntime {
  return createCodemodeRuntime({
    connectors: [tasksConnector(api)],
    approvalSecret: "0123456789abcdef0123456789abcdef-model-tools",
  });
}

const turn = (
  model: Parameters<typeof chatTurn>[0],
  runtime: CodemodeRuntime,
  messages: Parameters<typeof chatTurn>[2],
) => chatTurn(model, runtime, messages, { modelTools: { approvedBy: "chat-user" } });

describe.each(file.apis)("tools the model calls directly, through @ai-sdk/openai ($api API)", ({ model }) => {
  it("R-CN-OA one tool called directly, another from a program, a gated one approved in the chat and run once", async () => {
    api.reset();
    const { runtime } = file.track({ runtime: tasksRuntime() });
    // The provider is offered the Code Mode tool and the two model tools; the program's description names neither.
    const first = user("u1", "How many tasks are open?");
    const counted = await turn(model(), runtime, [first]);
    const offered = file.imitation.requests[0]!.tools;
    expect(offered.sort()).toEqual(["codemode", "tasks_createTask", "tasks_getStats"]);
    expect(textOf(counted)).toMatch(
      /^I saw: \{"status":"completed","executionId":"[^"]+","result":\{"open":8,"done":5\}\}$/,
    );

    const second = user("u2", "List three open tasks.");
    const listed = await turn(model(), runtime, [first, counted, second]);
    expect(listed.parts.find((part) => part.type === "tool-codemode")).toMatchObject({
      state: "output-available",
      input: { code: LIST_PROGRAM },
    });
    expect(textOf(listed)).toContain('"result":["Write the quarterly report"');

    const third = user("u3", "Create a task to order pens.");
    const asking = await turn(model(), runtime, [first, counted, second, listed, third]);
    const request = asking.parts.find((part) => part.type === "tool-tasks_createTask");
    expect(request).toMatchObject({ state: "approval-requested", input: { body: { title: "Order pens" } } });
    expect(api.requests.filter((request) => request.method === "POST")).toEqual([]);
    const pending = (await runtime.pending()).items;
    expect(pending.map((action) => [action.connector, action.method])).toEqual([["tasks", "createTask"]]);

    const approved = answerApprovals(asking, "tool-tasks_createTask", true);
    const created = await turn(model(), runtime, [first, counted, second, listed, third, approved]);
    expect(textOf(created)).toContain('"result":{"id":14,"title":"Order pens"');
    const posts = api.requests.filter((request) => request.method === "POST");
    expect(posts).toHaveLength(1);
    expect(posts[0]!.headers["idempotency-key"]).toBe(`${pending[0]!.executionId}:0`);
    const state = await runtime.execution(pending[0]!.executionId);
    expect(state?.log.map((call) => [call.method, call.state, call.decision?.by])).toEqual([
      ["createTask", "applied", "chat-user"],
    ]);
  });

  it("R-CN-OA a gated direct call denied in the chat: syncApprovals denies its run, and nothing is sent", async () => {
    api.reset();
    const { runtime } = file.track({ runtime: tasksRuntime() });
    const first = user("u1", "Create a task to order pens.");
    const asking = await turn(model(), runtime, [first]);
    const executionId = (await runtime.pending()).items[0]!.executionId;
    const denied = answerApprovals(asking, "tool-tasks_createTask", false, "not now");
    await turn(model(), runtime, await syncApprovals([first, denied, user("u2", "Fine.")], runtime));
    expect(await runtime.outcome(executionId)).toMatchObject({ status: "error", code: "APPROVAL_DENIED" });
    expect(api.requests.filter((request) => request.method === "POST")).toEqual([]);
  });
});
