/**
 * R-CN-OA over MCP: the tools the model calls directly are MCP tools of their own beside `execute`
 * (named `connector_method`, with their input schema), each call a one-call run answered as
 * `execute` answers a program's: a read completes, a gated call pauses and, for a client allowed
 * to decide, is asked through elicitation and runs once. The tools come from the OpenAPI document
 * of a real HTTP API on 127.0.0.1.
 */
import { createCodemodeRuntime } from "@codemode/core";
import { createCodemodeMcpServer } from "@codemode/core/mcp";
import { openApiConnector } from "@codemode/core/openapi";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { acceptAll, agentClient, structuredOf } from "./mcp-fixtures/codemode-setup.ts";
import { connectInMemory } from "./mcp-fixtures/notes-server.ts";
import { startTasksApi, type TasksApi } from "./openapi/tasks-api.ts";

let api: TasksApi;
beforeAll(async () => {
  api = await startTasksApi();
});
afterAll(async () => {
  await api.close();
});
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  api.reset();
});

async function serve(elicit: boolean) {
  const tasks = openApiConnector({
    name: "tasks",
    spec: api.document("json"),
    headers: { Authorization: "Bearer secret-token" },
    callers: (operation) => (operation.name === "getStats" || operation.name === "createTask" ? ["model"] : ["code"]),
  });
  const runtime = createCodemodeRuntime({ connectors: [tasks], chatApprovals: true });
  const mcp = createCodemodeMcpServer(runtime, { elicitApproval: elicit });
  const { client, asked } = agentClient(elicit ? acceptAll() : undefined);
  await connectInMemory(mcp, client);
  cleanups.push(
    () => runtime.close(),
    mcp.close,
    () => client.close(),
  );
  return { runtime, client, asked };
}

describe("R-CN-OA model tools over MCP", () => {
  it("R-CN-OA lists the model tools beside execute; a read completes; a program cannot reach them", async () => {
    const { client } = await serve(false);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual([
      "search",
      "describe",
      "execute",
      "tasks_createTask",
      "tasks_getStats",
    ]);
    const stats = tools.find((tool) => tool.name === "tasks_getStats");
    expect(stats).toMatchObject({ title: "tasks.getStats", annotations: { readOnlyHint: true } });
    const create = tools.find((tool) => tool.name === "tasks_createTask");
    expect(create?.inputSchema).toMatchObject({ type: "object", required: ["body"] });
    expect(tools.find((tool) => tool.name === "execute")?.description).not.toContain("getStats");

    const counted = await client.callTool({ name: "tasks_getStats", arguments: {} });
    expect(structuredOf(counted)).toMatchObject({ status: "completed", result: { open: 8, done: 5 } });
    const refused = await client.callTool({
      name: "execute",
      arguments: { code: "async () => typeof tasks.getStats" },
    });
    expect(structuredOf(refused)).toMatchObject({ status: "completed", result: "undefined" });
  });

  it("R-CN-OA a gated direct call pauses; without elicitation it waits for an operator, with it it runs once", async () => {
    const waiting = await serve(false);
    const paused = await waiting.client.callTool({
      name: "tasks_createTask",
      arguments: { body: { title: "Order pens" } },
    });
    expect(structuredOf(paused)).toMatchObject({
      status: "paused",
      pending: [{ connector: "tasks", method: "createTask", args: { body: { title: "Order pens" } } }],
      message: expect.stringContaining("an operator must approve"),
    });
    expect(api.requests.filter((request) => request.method === "POST")).toEqual([]);

    const asking = await serve(true);
    const created = await asking.client.callTool({
      name: "tasks_createTask",
      arguments: { body: { title: "Order pens" } },
    });
    expect(asking.asked).toHaveLength(1);
    expect(structuredOf(created)).toMatchObject({ status: "completed", result: { title: "Order pens" } });
    const posts = api.requests.filter((request) => request.method === "POST");
    expect(posts).toHaveLength(1);
    expect(posts[0]!.headers["idempotency-key"]).toMatch(/:0$/);
  });
});
