/**
 * Issue 43 ("Serve and consume both protocols"), R-CON-5: mcpConnector with an SDK 2 client of a
 * 2026-07-28 server (SDK 2's `McpServer` behind `createMcpHandler`, over Streamable HTTP on
 * 127.0.0.1) calls its tools as tasks of the tasks extension (SEP-2663) where the server offers
 * them: the call declares the extension, the server answers with a task, the connector polls
 * `tasks/get` to its end, and cancels it with `tasks/cancel` when the run's wait ends first.
 */

import { fileURLToPath } from "node:url";
import { type CodemodeRuntime, createCodemodeRuntime } from "@codemode/core";
import { IDEMPOTENCY_KEY_META, mcpConnector } from "@codemode/core/mcp";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { afterEach, describe, expect, it } from "vitest";
import {
  EXTENSION_TASK_WORK_MS,
  type ExtensionTaskServer,
  LATE_ANSWER_MS,
  startExtensionTaskServer,
} from "./mcp-fixtures/extension-task-server.ts";

const runtimes: CodemodeRuntime[] = [];
const clients: Client[] = [];
const servers: ExtensionTaskServer[] = [];
afterEach(async () => {
  await Promise.all(runtimes.splice(0).map((runtime) => runtime.close()));
  await Promise.all(clients.splice(0).map((client) => client.close()));
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

/** A per-request timeout well under the tasks' work, so a plain tools/call would be cut. */
const SHORT_TIMEOUT_MS = 1_000;

async function buildsSetup(
  options: {
    taskTimeoutMs?: number;
    passTimeoutMs?: number;
    workMs?: number;
    offerTasks?: boolean;
    timeoutMs?: number;
  } = {},
) {
  const server = await startExtensionTaskServer({
    ...(options.workMs === undefined ? {} : { workMs: options.workMs }),
    ...(options.offerTasks === undefined ? {} : { offerTasks: options.offerTasks }),
  });
  servers.push(server);
  const client = new Client({ name: "sdk2-tasks", version: "1.0.0" }, { versionNegotiation: { mode: "auto" } });
  await client.connect(new StreamableHTTPClientTransport(server.url));
  clients.push(client);
  const builds = await mcpConnector({
    name: "builds",
    client,
    approval: "never",
    timeoutMs: options.timeoutMs ?? SHORT_TIMEOUT_MS,
    ...(options.taskTimeoutMs ? { taskTimeoutMs: options.taskTimeoutMs } : {}),
  });
  const runtime = createCodemodeRuntime({
    connectors: [builds],
    ...(options.passTimeoutMs ? { limits: { timeoutMs: options.passTimeoutMs } } : {}),
  });
  runtimes.push(runtime);
  return { server, client, runtime };
}

/** Waits until `check` holds (the server's records settle just after the call's end). */
async function eventually(check: () => boolean): Promise<void> {
  for (let tries = 0; tries < 200 && !check(); tries += 1) await new Promise((resolve) => setTimeout(resolve, 10));
}

const catching = (call: string) =>
  `async () => { try { return await ${call}; } catch (error) { return "rejected: " + error.message; } }`;

describe("issue 43, R-CON-5: a 2026-07-28 server's tools run as tasks of the tasks extension (SEP-2663)", () => {
  it("awaits a task that outlasts the per-request timeout, and the program gets its result", async () => {
    const { server, client, runtime } = await buildsSetup();
    expect(client.getProtocolEra()).toBe("modern");
    const started = Date.now();
    const outcome = await runtime.execute({ code: `async () => builds.slow_report({ text: "quarterly" })` });
    expect(outcome).toMatchObject({ status: "completed", result: { tool: "slow-report", text: "quarterly" } });
    expect(Date.now() - started).toBeGreaterThanOrEqual(EXTENSION_TASK_WORK_MS - 20);
    // The call declared the extension and carried the idempotency key; the connector's own mark never left.
    expect(server.calls).toEqual([
      {
        name: "slow-report",
        declaredTasks: true,
        meta: expect.objectContaining({ [IDEMPOTENCY_KEY_META]: `${outcome.executionId}:0` }),
      },
    ]);
    expect(Object.keys(server.calls[0]!.meta).filter((key) => key.startsWith("codemode/"))).toEqual([
      IDEMPOTENCY_KEY_META,
    ]);
    // Polled with tasks/get, each with the Mcp-Name header naming the task.
    expect(server.taskRequests.length).toBeGreaterThan(0);
    for (const request of server.taskRequests)
      expect(request).toMatchObject({ method: "tasks/get", mcpName: request.taskId });
    expect(server.statuses()).toEqual(["completed"]);
  });

  it("rejects the program's call with a failed task's error, and a completed task's tool error with its text", async () => {
    const { runtime } = await buildsSetup();
    const outcome = await runtime.execute({
      code: `async () => [await (${catching("builds.broken_job({ text: 'x' })")})(), await (${catching("builds.refused_job({ text: 'y' })")})()]`,
    });
    expect(outcome).toMatchObject({
      status: "completed",
      result: [
        "rejected: builds.broken-job: the upstream task failed: the build farm is on fire",
        "rejected: permission denied for deploy",
      ],
    });
  });

  it("a call the server answers at once is a plain result, though the extension was declared", async () => {
    const { server, runtime } = await buildsSetup();
    const outcome = await runtime.execute({ code: `async () => builds.echo({ text: "hi" })` });
    expect(outcome).toMatchObject({ status: "completed", result: { tool: "echo", text: "hi" } });
    expect(server.calls.map((call) => [call.name, call.declaredTasks])).toEqual([["echo", true]]);
    expect(server.taskRequests).toEqual([]);
  });

  it("runs two task calls side by side, each with its own result", async () => {
    const { runtime } = await buildsSetup();
    const outcome = await runtime.execute({
      code: `async () => Promise.all([builds.slow_report({ text: "one" }), builds.slow_report({ text: "two" })])`,
    });
    expect(outcome).toMatchObject({
      status: "completed",
      result: [
        { tool: "slow-report", text: "one" },
        { tool: "slow-report", text: "two" },
      ],
    });
  });

  it("gives up after taskTimeoutMs: the call rejects and the server gets tasks/cancel for that task", async () => {
    const { server, runtime } = await buildsSetup({ taskTimeoutMs: 300 });
    const outcome = await runtime.execute({ code: catching(`builds.endless_job({ text: "forever" })`) });
    expect(outcome).toMatchObject({
      status: "completed",
      result: "rejected: builds.endless-job: the upstream task took longer than 300 ms",
    });
    expect(server.cancelled).toHaveLength(1);
    const cancel = server.taskRequests.find((request) => request.method === "tasks/cancel");
    expect(cancel).toMatchObject({ taskId: server.cancelled[0], mcpName: server.cancelled[0] });
    expect(server.statuses()).toEqual(["cancelled"]);
  });

  it("a wait that ends before the server's answer arrives still cancels the task that answer brings", async () => {
    // A per-request timeout long enough for the late answer to arrive at all.
    const { server, runtime } = await buildsSetup({ taskTimeoutMs: 100, timeoutMs: 5_000 });
    const started = Date.now();
    const outcome = await runtime.execute({ code: catching(`builds.late_answer_job({ text: "slow" })`) });
    expect(outcome).toMatchObject({
      status: "completed",
      result: "rejected: builds.late-answer-job: the upstream task took longer than 100 ms",
    });
    // The call ended at its bound, not when the server got round to answering.
    expect(Date.now() - started).toBeLessThan(LATE_ANSWER_MS);
    await eventually(() => server.cancelled.length > 0);
    expect(server.statuses()).toEqual(["cancelled"]);
  });

  it("the wait counts against the pass's time limit: at the pass's deadline the task is cancelled upstream", async () => {
    const { server, runtime } = await buildsSetup({ passTimeoutMs: 1_000 });
    const outcome = await runtime.execute({ code: `async () => builds.endless_job({ text: "late" })` });
    expect(outcome.status).toBe("error");
    if (outcome.status === "error" && outcome.code !== "TIMEOUT")
      expect(outcome).toMatchObject({
        code: "PROGRAM_ERROR",
        error: expect.stringContaining("the pass's time limit ran out while the upstream task ran"),
      });
    await eventually(() => server.cancelled.length > 0);
    expect(server.statuses()).toEqual(["cancelled"]);
  });

  it("a cancelled run stops waiting and cancels the upstream task (runtime.cancel)", async () => {
    const { server, runtime } = await buildsSetup();
    const running = runtime.execute({ code: `async () => builds.endless_job({ text: "never mind" })` });
    await eventually(() => server.statuses().length > 0);
    const [listed] = (await runtime.executions({ status: "running" })).items;
    expect(await runtime.cancel({ executionId: listed!.id, by: "ops" })).toMatchObject({ result: "cancelled" });
    const outcome = await running;
    expect(outcome).toMatchObject({ status: "error", code: "CANCELLED" });
    expect(outcome.calls?.map((call) => [call.state, call.error])).toEqual([
      ["error", "builds.endless-job: the run was cancelled while the upstream task ran"],
    ]);
    await eventually(() => server.cancelled.length > 0);
    expect(server.statuses()).toEqual(["cancelled"]);
  });

  it("a task that asks for input it cannot give is cancelled, and the call says what was asked", async () => {
    const { server, runtime } = await buildsSetup();
    const outcome = await runtime.execute({ code: catching(`builds.asking_job({ text: "deploy" })`) });
    expect(outcome).toMatchObject({
      status: "completed",
      result: expect.stringMatching(/^rejected: builds\.asking-job: the upstream task asked for input \(confirm\)/),
    });
    expect(server.statuses()).toEqual(["cancelled"]);
  });

  it("the application's own calls on the same client declare nothing, so the server answers them plainly", async () => {
    const { server, client, runtime } = await buildsSetup();
    expect(await runtime.execute({ code: `async () => builds.slow_report({ text: "via codemode" })` })).toMatchObject({
      status: "completed",
    });
    const own = await client.callTool({ name: "slow-report", arguments: { text: "direct" } });
    expect(own).toMatchObject({ structuredContent: { tool: "slow-report", text: "direct" } });
    expect(server.calls.map((call) => call.declaredTasks)).toEqual([true, false]);
  });

  it("a 2026-07-28 server that does not offer the extension is called plainly, within the per-request timeout", async () => {
    const { server, runtime } = await buildsSetup({ offerTasks: false, workMs: 20 });
    const outcome = await runtime.execute({ code: `async () => builds.slow_report({ text: "quick" })` });
    expect(outcome).toMatchObject({ status: "completed", result: { tool: "slow-report", text: "quick" } });
    expect(server.calls.map((call) => call.declaredTasks)).toEqual([false]);
  });
});

describe("issue 43, R-CON-5: the same tasks over stdio, from a server in a child process", () => {
  const STDIO_SERVER = fileURLToPath(new URL("./mcp-fixtures/extension-task-stdio.ts", import.meta.url));

  it("a program gets a task's result, a failed task's error, and a task past its bound is cancelled upstream", async () => {
    const client = new Client({ name: "sdk2-stdio", version: "1.0.0" }, { versionNegotiation: { mode: "auto" } });
    await client.connect(
      new StdioClientTransport({ command: process.execPath, args: [STDIO_SERVER], stderr: "ignore" }),
    );
    clients.push(client);
    expect(client.getProtocolEra()).toBe("modern");
    const builds = await mcpConnector({
      name: "builds",
      client,
      approval: "never",
      timeoutMs: SHORT_TIMEOUT_MS,
      taskTimeoutMs: 4_000,
    });
    const runtime = createCodemodeRuntime({ connectors: [builds] });
    runtimes.push(runtime);
    const outcome = await runtime.execute({
      code: `async () => [
        await builds.slow_report({ text: "over stdio" }),
        await (${catching("builds.broken_job({ text: 'x' })")})(),
        await (${catching("builds.endless_job({ text: 'y' })")})(),
      ]`,
    });
    expect(outcome).toMatchObject({
      status: "completed",
      result: [
        { tool: "slow-report", text: "over stdio" },
        "rejected: builds.broken-job: the upstream task failed: the build farm is on fire",
        "rejected: builds.endless-job: the upstream task took longer than 4000 ms",
      ],
    });
    let records = {
      cancelled: [] as string[],
      statuses: [] as string[],
      calls: [] as Array<{ declaredTasks: boolean }>,
    };
    for (let tries = 0; tries < 100 && records.cancelled.length === 0; tries += 1) {
      const read = await runtime.execute({ code: `async () => builds.records()` });
      records = (read as { result: typeof records }).result;
    }
    expect(records.statuses).toEqual(["completed", "failed", "cancelled"]);
    expect(records.cancelled).toHaveLength(1);
    expect(records.calls.slice(0, 3).map((call) => call.declaredTasks)).toEqual([true, true, true]);
  });
});
