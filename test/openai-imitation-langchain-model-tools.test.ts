/**
 * R-CN-OA with LangChain: `createAgent` with the real `ChatOpenAI` against the local imitation of
 * the OpenAI API calls one tool directly (`tasks_getStats`), another from a program
 * (`tasks.listTasks`) and a gated one directly (`tasks_createTask`), in one thread. The gated call
 * pauses its one-call run; `codemodeApprovalMiddleware` interrupts for it as for a program's pause;
 * resumed with an approval, the task is created once, with its idempotency key. The tools come
 * from the OpenAPI document of a real HTTP API on 127.0.0.1.
 */
import { type CodemodeRuntime, createCodemodeRuntime } from "@codemode/core";
import { createCodemodeTool, createModelTools } from "@codemode/langchain";
import {
  type CodemodeApprovalRequest,
  codemodeApprovalMiddleware,
  resumeCodemodeApproval,
} from "@codemode/langchain/middleware";
import { MemorySaver } from "@langchain/langgraph";
import { ChatOpenAI } from "@langchain/openai";
import { createAgent } from "langchain";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type OpenAIImitation, startOpenAIImitation } from "./openai-imitation/server.ts";
import { tasksConnector, tasksModel } from "./openai-imitation/tasks-model.ts";
import { startTasksApi, type TasksApi } from "./openapi/tasks-api.ts";

let api: TasksApi;
let imitation: OpenAIImitation;
const runtimes: CodemodeRuntime[] = [];
beforeAll(async () => {
  api = await startTasksApi();
  imitation = await startOpenAIImitation(tasksModel);
});
afterAll(async () => {
  for (const runtime of runtimes) await runtime.close();
  await imitation.close();
  await api.close();
});

describe("tools the model calls directly, in a LangChain agent (real ChatOpenAI)", () => {
  it("R-CN-OA one tool called directly, another from a program, a gated one interrupted, approved and run once", async () => {
    const runtime = createCodemodeRuntime({ connectors: [tasksConnector(api)] });
    runtimes.push(runtime);
    const agent = createAgent({
      model: new ChatOpenAI({
        model: "gpt-4.1-mini",
        apiKey: "imitation",
        configuration: { baseURL: imitation.baseURL },
        maxRetries: 0,
      }),
      tools: [createCodemodeTool(runtime), ...createModelTools(runtime)],
      middleware: [codemodeApprovalMiddleware(runtime)],
      checkpointer: new MemorySaver(),
    });
    const thread = { configurable: { thread_id: "tasks-1" } };
    const lastText = (result: { messages: Array<{ content: unknown }> }) => String(result.messages.at(-1)?.content);

    const counted = await agent.invoke({ messages: [{ role: "user", content: "How many tasks are open?" }] }, thread);
    expect(imitation.requests[0]?.tools.sort()).toEqual(["codemode", "tasks_createTask", "tasks_getStats"]);
    expect(lastText(counted)).toMatch(/^I saw: .*"result":\{"open":8,"done":5\}/);

    const listed = await agent.invoke({ messages: [{ role: "user", content: "List three open tasks." }] }, thread);
    expect(lastText(listed)).toContain('"result":["Write the quarterly report"');

    const asking = await agent.invoke(
      { messages: [{ role: "user", content: "Create a task to order pens." }] },
      thread,
    );
    const request = asking.__interrupt__?.[0]?.value as CodemodeApprovalRequest | undefined;
    expect(request?.pending.map((action) => [action.connector, action.method, action.args])).toEqual([
      ["tasks", "createTask", { body: { title: "Order pens" } }],
    ]);
    expect(api.requests.filter((sent) => sent.method === "POST")).toEqual([]);

    const done = await resumeCodemodeApproval(agent, { decisions: [{ type: "approve", by: "ops" }] }, thread);
    expect(done.__interrupt__ ?? []).toEqual([]);
    expect(lastText(done)).toContain('"result":{"id":14,"title":"Order pens"');
    const posts = api.requests.filter((sent) => sent.method === "POST");
    expect(posts).toHaveLength(1);
    expect(posts[0]!.headers["idempotency-key"]).toBe(`${request!.pending[0]!.executionId}:0`);
  });
});
