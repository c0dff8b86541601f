/**
 * Issue 27: mcpConnector calls long upstream tools as MCP tasks when the server supports them, so
 * a program awaits a long upstream job without the per-request timeout cutting the call.
 */
import { type CodemodeRuntime, createCodemodeRuntime } from "@codemode/core";
import { mcpConnector } from "@codemode/core/mcp";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterEach, describe, expect, it } from "vitest";
import { connectInMemory } from "./mcp-fixtures/notes-server.ts";
import { createTaskServer, expectSlowReportAsTask } from "./mcp-fixtures/task-server.ts";

const runtimes: CodemodeRuntime[] = [];
const clients: Client[] = [];
afterEach(async () => {
  await Promise.all(runtimes.splice(0).map((runtime) => runtime.close()));
  await Promise.all(clients.splice(0).map((client) => client.close()));
});

/** A per-request timeout well under the tasks' work, so a plain tools/call would be cut. */
const SHORT_TIMEOUT_MS = 100;

async function jobsSetup(
  options: { withTasks?: boolean; taskTimeoutMs?: number; passTimeoutMs?: number; workMs?: number } = {},
) {
  const jobsServer = createTaskServer({
    withTasks: options.withTasks ?? true,
    ...(options.workMs !== undefined ? { workMs: options.workMs } : {}),
  });
  const client = await connectInMemory(jobsServer.server);
  clients.push(client);
  const jobs = await mcpConnector({
    name: "jobs",
    client,
    approval: "never",
    timeoutMs: SHORT_TIMEOUT_MS,
    ...(options.taskTimeoutMs ? { taskTimeoutMs: options.taskTimeoutMs } : {}),
  });
  const runtime = createCodemodeRuntime({
    connectors: [jobs],
    ...(options.passTimeoutMs ? { limits: { timeoutMs: options.passTimeoutMs } } : {}),
  });
  runtimes.push(runtime);
  return { ...jobsServer, runtime };
}

describe("mcpConnector: upstream tools run as tasks", () => {
  it("awaits a task that outlasts the per-request timeout, and the program gets its result", async () => {
    const { runtime, calls } = await jobsSetup();
    await expectSlowReportAsTask(runtime, calls);
  });

  it("calls a tool whose taskSupport is required as a task", async () => {
    const { runtime, calls } = await jobsSetup();
    const outcome = await runtime.execute({ code: `async () => jobs.required_job({ text: "deploy" })` });
    expect(outcome).toMatchObject({ status: "completed", result: { tool: "required-job", text: "deploy" } });
    expect(calls.map((call) => call.asTask)).toEqual([true]);
  });

  it("rejects the program's call with the failed task's message", async () => {
    const { runtime } = await jobsSetup();
    const outcome = await runtime.execute({
      code: `async () => {
        try { await jobs.broken_job({ text: "x" }); return "no error"; } catch (error) { return error.message; }
      }`,
    });
    expect(outcome).toMatchObject({ status: "completed", result: "the build farm is on fire" });
  });

  it("calls a tool without taskSupport plainly, as before", async () => {
    const { runtime, calls } = await jobsSetup();
    const outcome = await runtime.execute({ code: `async () => jobs.echo({ text: "hi" })` });
    expect(outcome).toMatchObject({ status: "completed", result: { tool: "echo", text: "hi" } });
    expect(calls.map((call) => call.asTask)).toEqual([false]);
  });

  it("calls plainly when the server does not declare the tasks capability", async () => {
    const { runtime, calls } = await jobsSetup({ withTasks: false });
    const outcome = await runtime.execute({ code: `async () => jobs.slow_report({ text: "now" })` });
    expect(outcome).toMatchObject({ status: "completed", result: { tool: "slow-report", text: "now" } });
    expect(calls.map((call) => call.asTask)).toEqual([false]);
  });

  it("gives up on a task after taskTimeoutMs, rejecting the call", async () => {
    const { runtime } = await jobsSetup({ taskTimeoutMs: 150 });
    const outcome = await runtime.execute({
      code: `async () => {
        try { await jobs.slow_report({ text: "late" }); return "no error"; } catch (error) { return error.message; }
      }`,
    });
    expect(outcome).toMatchObject({ status: "completed", result: expect.stringMatching(/took longer than 150 ms/) });
  });

  it("the wait counts against the pass's time limit: at the pass's deadline the call ends and the upstream task is cancelled", async () => {
    // A deadline long enough for the task to exist on a loaded machine, and work that outlasts it.
    const { runtime, taskStatuses } = await jobsSetup({ passTimeoutMs: 1_000, workMs: 5_000 });
    const outcome = await runtime.execute({ code: `async () => jobs.slow_report({ text: "late" })` });
    // The call's wait and the sandbox end at the same instant: whichever is seen first, the run ends
    // at its deadline (TIMEOUT), or the program did not catch the call's rejection saying so.
    expect(outcome.status).toBe("error");
    if (outcome.status === "error" && outcome.code !== "TIMEOUT")
      expect(outcome).toMatchObject({
        code: "PROGRAM_ERROR",
        error: expect.stringContaining("the pass's time limit ran out while the upstream task ran"),
      });
    // The upstream wait ended with the pass: its task is cancelled, not left to complete later.
    let statuses = await taskStatuses();
    while (statuses[0] === "working") {
      await new Promise((resolve) => setTimeout(resolve, 5));
      statuses = await taskStatuses();
    }
    expect(statuses).toEqual(["cancelled"]);
  });

  it("a cancelled run stops waiting for the upstream task and cancels it (runtime.cancel)", async () => {
    const { runtime, calls, taskStatuses } = await jobsSetup();
    const running = runtime.execute({ code: `async () => jobs.slow_report({ text: "never mind" })` });
    while (calls.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    const [listed] = (await runtime.executions({ status: "running" })).items;
    expect(await runtime.cancel({ executionId: listed!.id, by: "ops" })).toMatchObject({ result: "cancelled" });
    const outcome = await running;
    expect(outcome).toMatchObject({ status: "error", code: "CANCELLED" });
    expect(outcome.calls?.map((call) => [call.state, call.error])).toEqual([
      ["error", "jobs.slow-report: the run was cancelled while the upstream task ran"],
    ]);
    expect(await taskStatuses()).toEqual(["cancelled"]);
  });
});
