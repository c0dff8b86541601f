/**
 * R-CN-OA through `@ai-sdk/openai` against the local imitation of the OpenAI API: in one
 * conversation the model calls one tool directly (`tasks_getStats`, a tool of its own next to the
 * Code Mode tool), another from a program (`tasks.listTasks`), and a gated one directly
 * (`tasks_createTask`): that call becomes the AI SDK's own approval request, signed and bound to
 * its pause, and once approved the task is created once, with its idempotency key. The tools come
 * from the OpenAPI document of a real HTTP API on 127.0.0.1.
 */
import { codemodeToolApproval, createCodemodeTool, createModelTools, syncApprovals } from "@codemode/ai-sdk";
import { type CodemodeRuntime, createCodemodeRuntime } from "@codemode/core";
import { openApiConnector } from "@codemode/core/openapi";
import {
  convertToModelMessages,
  type LanguageModel,
  readUIMessageStream,
  stepCountIs,
  streamText,
  type UIMessage,
} from "ai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { imitationForFile, textOf, user } from "./openai-imitation/chat.ts";
import type { Item, Reply } from "./openai-imitation/server.ts";
import { startTasksApi, type TasksApi } from "./openapi/tasks-api.ts";

const LIST_PROGRAM = `async () => {
  const page = await tasks.listTasks({ status: "open", limit: 3 });
  return page.items.map((task) => task.title);
}`;

/**
 * The imitated model: a question about counts is answered with the direct stats tool, a list with
 * a program, a new task with the direct create tool; after a tool result it reports what it saw.
 */
function tasksModel(items: Item[]): Reply {
  const last = items.at(-1);
  if (last?.type === "result") return { text: `I saw: ${last.output}` };
  const asked = items.findLast((item) => item.type === "text" && item.role === "user");
  const text = asked?.type === "text" ? asked.text : "";
  if (/how many/i.test(text)) return { call: { name: "tasks_getStats", arguments: {} } };
  if (/list/i.test(text)) return { call: { name: "codemode", arguments: { code: LIST_PROGRAM } } };
  if (/create/i.test(text))
    return { call: { name: "tasks_createTask", arguments: { body: { title: "Order pens", priority: "high" } } } };
  return { text: "How can I help?" };
}

const file = imitationForFile(tasksModel);
let api: TasksApi;
beforeAll(async () => {
  api = await startTasksApi();
});
afterAll(async () => {
  await api.close();
});

async function turn(model: LanguageModel, runtime: CodemodeRuntime, messages: UIMessage[]): Promise<UIMessage> {
  const tools = { codemode: createCodemodeTool(runtime), ...createModelTools(runtime, { approvedBy: "chat-user" }) };
  const result = streamText({
    model,
    tools,
    toolApproval: codemodeToolApproval(runtime),
    stopWhen: stepCountIs(5),
    messages: await convertToModelMessages(messages, { tools }),
  });
  // After an approval the browser sends the assistant's message back, and the stream goes on with it.
  const last = messages.at(-1);
  const continued = last?.role === "assistant" ? last : undefined;
  let assistant: UIMessage | undefined;
  const stream = result.toUIMessageStream(continued ? { originalMessages: messages } : {});
  for await (const message of readUIMessageStream({ stream, ...(continued ? { message: continued } : {}) }))
    assistant = message;
  return assistant!;
}

function tasksRuntime(): CodemodeRuntime {
  const tasks = openApiConnector({
    name: "tasks",
    spec: api.document("yaml"),
    headers: { Authorization: "Bearer secret-token" },
    callers: (operation) => (operation.name === "getStats" || operation.name === "createTask" ? ["model"] : ["code"]),
  });
  return createCodemodeRuntime({
    connectors: [tasks],
    approvalSecret: "0123456789abcdef0123456789abcdef-model-tools",
  });
}

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

    const approved = {
      ...asking,
      parts: asking.parts.map((part) =>
        part.type === "tool-tasks_createTask" && part.state === "approval-requested"
          ? { ...part, state: "approval-responded" as const, approval: { ...part.approval, approved: true } }
          : part,
      ),
    } as typeof asking;
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
    const denied = {
      ...asking,
      parts: asking.parts.map((part) =>
        part.type === "tool-tasks_createTask" && part.state === "approval-requested"
          ? {
              ...part,
              state: "approval-responded" as const,
              approval: { ...part.approval, approved: false, reason: "not now" },
            }
          : part,
      ),
    } as typeof asking;
    await turn(model(), runtime, await syncApprovals([first, denied, user("u2", "Fine.")], runtime));
    expect(await runtime.outcome(executionId)).toMatchObject({ status: "error", code: "APPROVAL_DENIED" });
    expect(api.requests.filter((request) => request.method === "POST")).toEqual([]);
  });
});
