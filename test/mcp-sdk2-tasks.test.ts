/**
 * Issue 43, R-CON-5 R-AP-8 R-AP-9 R-AP-11: Code Mode served to clients of the 2026-07-28 protocol
 * (MCP SDK 2) with the tasks extension: `execute` is a task, a pause is `input_required` with an
 * approval form for a client allowed to decide, answered per action with `tasks/update`, and the
 * task completes with the whole truth in its result. Over Streamable HTTP (the endpoint that
 * serves 2025 clients too) and over stdio (the `codemode-mcp` bin, built).
 */
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type CodemodeMcpServerOptions, createCodemodeMcpServer } from "@codemode/core/mcp";
import { type Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { Client as LegacyClient } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as LegacyHttpTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it } from "vitest";
import { scratchDirectory, TIMEOUT } from "./cli-fixtures/run-cli.ts";
import { DELETE_BOTH, DELETE_TWO, notesRuntime } from "./mcp-fixtures/codemode-setup.ts";
import {
  executeAsTask,
  getTask,
  type ModernTask,
  modernClient,
  updateTask,
  waitForTask,
} from "./mcp-fixtures/modern-client.ts";

const BIN = fileURLToPath(new URL("../packages/core/dist/mcp/bin.js", import.meta.url));
const CONFIG = fileURLToPath(new URL("./mcp-fixtures/tasks-config.ts", import.meta.url));

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function serveHttp(options: CodemodeMcpServerOptions = { elicitApproval: true }) {
  const setup = await notesRuntime();
  const mcp = createCodemodeMcpServer(setup.runtime, options);
  const listener = await mcp.listen();
  cleanups.push(setup.close, () => mcp.close());
  const connect = async (name: string, decide: boolean, tasks = true) => {
    const client = await modernClient(new StreamableHTTPClientTransport(listener.url), name, decide, tasks);
    cleanups.push(() => client.close());
    return client;
  };
  return { runtime: setup.runtime, calls: setup.calls, mcp, listener, connect };
}

/** The execution a task id names: the server signs it after a dot (only the id it gave decides). */
function executionIdOf(taskId: string): string {
  return taskId.split(".")[0] as string;
}

/** The one question of an `input_required` task: its key and the form's properties. */
function questionOf(task: ModernTask): { key: string; properties: string[]; message: string } {
  const entries = Object.entries(task.inputRequests ?? {});
  expect(entries).toHaveLength(1);
  const [key, request] = entries[0] as [string, { method: string; params: Record<string, unknown> }];
  expect(request.method).toBe("elicitation/create");
  const schema = request.params.requestedSchema as { properties: Record<string, unknown> };
  return { key, properties: Object.keys(schema.properties), message: String(request.params.message) };
}

describe("issue 43, R-MCP-T2: a 2026-07-28 client decides a paused task with tasks/update (Streamable HTTP)", () => {
  it("R-AP-8: execute is a task in input_required; one approved, one denied; the task completes with both facts", async () => {
    const served = await serveHttp();
    const client = await served.connect("sdk2-agent", true);
    expect(client.getProtocolEra()).toBe("modern");
    const created = await executeAsTask(client, DELETE_BOTH);
    const paused = await waitForTask(client, created.taskId, ["input_required"]);
    const question = questionOf(paused);
    expect(question.properties).toEqual(["seq_2", "args_2", "seq_3", "args_3", "reason"]);
    expect(question.message).toContain("notes.delete_note");
    await updateTask(client, created.taskId, {
      [question.key]: { action: "accept", content: { seq_2: "approve", seq_3: "deny", reason: "keep the second" } },
    });
    const done = await waitForTask(client, created.taskId, ["completed", "failed", "cancelled"]);
    expect(done.status).toBe("completed");
    const structured = (done.result as { structuredContent: { status: string; result: unknown[] } }).structuredContent;
    expect(structured.status).toBe("completed");
    // The whole truth: the delete that ran, and the one that was denied, with the reason.
    expect(String(structured.result[0])).not.toContain("ApprovalDenied");
    expect(String(structured.result[1])).toMatch(/ApprovalDenied.*keep the second/);
    expect((structured as unknown as { decided: unknown[] }).decided).toMatchObject([
      { seq: 2, decision: "approved", outcome: "ran" },
      { seq: 3, decision: "denied", outcome: "denied", reason: "keep the second" },
    ]);
    expect(served.calls.filter((call) => call.name === "delete-note").map((call) => call.args)).toEqual([{ id: 1 }]);
    // Recorded as the client's claim, through tasks/update (R-AP-7).
    const execution = await served.runtime.execution(executionIdOf(created.taskId));
    const decided = execution?.log.find((entry) => entry.seq === 2);
    expect(JSON.stringify(decided)).toContain('tasks/update from an MCP client that calls itself \\"sdk2-agent\\"');
  });

  it("R-AP-9: an answer bound to an earlier pause is refused and decides nothing; the current question still waits", async () => {
    const served = await serveHttp();
    const client = await served.connect("sdk2-agent", true);
    const created = await executeAsTask(client, DELETE_TWO);
    const first = questionOf(await waitForTask(client, created.taskId, ["input_required"]));
    await updateTask(client, created.taskId, { [first.key]: { action: "accept", content: { seq_2: "approve" } } });
    let second = await waitForTask(client, created.taskId, ["input_required"]);
    for (let wait = 0; wait < 100 && questionOf(second).key === first.key; wait++)
      second = await waitForTask(client, created.taskId, ["input_required"]);
    expect(questionOf(second).key).not.toBe(first.key);
    expect(questionOf(second).properties).toEqual(["seq_3", "args_3", "reason"]);
    // The first answer again, or a made-up answer for the first question's key: refused.
    await expect(
      updateTask(client, created.taskId, { [first.key]: { action: "accept", content: { seq_3: "approve" } } }),
    ).rejects.toThrow(/no longer waits.*decides nothing/);
    expect((await getTask(client, created.taskId)).status).toBe("input_required");
    expect(served.calls.filter((call) => call.name === "delete-note")).toHaveLength(1);
    // An answer the form did not ask is refused whole.
    await expect(
      updateTask(client, created.taskId, {
        [questionOf(second).key]: { action: "accept", content: { seq_3: "approve", seq_9: "approve" } },
      }),
    ).rejects.toThrow(/refused.*seq_9.*nothing was decided/);
    await updateTask(client, created.taskId, {
      [questionOf(second).key]: { action: "accept", content: { seq_3: "approve" } },
    });
    const done = await waitForTask(client, created.taskId, ["completed"]);
    expect((done.result as { structuredContent: { result: unknown } }).structuredContent.result).toBe(0);
  });

  it("R-AP-11: a client that may not decide is asked nothing, is told who decides, and its tasks/update is refused", async () => {
    const served = await serveHttp();
    const client = await served.connect("no-forms", false);
    const created = await executeAsTask(client, DELETE_TWO);
    let task = await getTask(client, created.taskId);
    for (let wait = 0; wait < 200 && !task.statusMessage; wait++) task = await getTask(client, created.taskId);
    expect(task.status).toBe("working");
    expect(task.inputRequests).toBeUndefined();
    expect(task.statusMessage).toMatch(/notes\.delete_note \(seq 2\).*operator.*codemode approve/);
    await expect(
      updateTask(client, created.taskId, { "approval-0123": { action: "accept", content: { seq_2: "approve" } } }),
    ).rejects.toThrow(/may not decide/);
    // A deciding client of a server that does not trust clients with approvals is not asked either.
    const strict = await serveHttp({ elicitApproval: false });
    const decider = await strict.connect("sdk2-agent", true);
    const other = await executeAsTask(decider, DELETE_TWO);
    let seen = await getTask(decider, other.taskId);
    for (let wait = 0; wait < 200 && !seen.statusMessage; wait++) seen = await getTask(decider, other.taskId);
    expect(seen.status).toBe("working");
    expect(strict.calls.filter((call) => call.name === "delete-note")).toHaveLength(0);
    // The operator decides as always, and the task follows.
    await strict.runtime.approve({ executionId: executionIdOf(other.taskId), by: "operator" });
    await strict.runtime.approve({ executionId: executionIdOf(other.taskId), by: "operator" });
    expect((await waitForTask(decider, other.taskId, ["completed"])).status).toBe("completed");
  });

  it("R-AP-11: an execution id alone (a run started elsewhere, or another client's) reads the run but decides nothing", async () => {
    const served = await serveHttp();
    const client = await served.connect("sdk2-agent", true);
    const started = await served.runtime.execute({ code: DELETE_BOTH });
    expect(started.status).toBe("paused");
    const task = await getTask(client, started.executionId);
    expect(task.status).toBe("working");
    expect(task.inputRequests).toBeUndefined();
    expect(task.statusMessage).toMatch(/operator/);
    // A task of its own, and the same question's key on the bare id: refused.
    const own = await executeAsTask(client, DELETE_BOTH);
    expect(own.taskId.startsWith(`${executionIdOf(own.taskId)}.`)).toBe(true);
    const question = questionOf(await waitForTask(client, own.taskId, ["input_required"]));
    await expect(
      updateTask(client, executionIdOf(own.taskId), {
        [question.key]: { action: "accept", content: { seq_2: "approve", seq_3: "approve" } },
      }),
    ).rejects.toThrow(/Only the task id this server gave/);
    await expect(
      updateTask(client, `${executionIdOf(own.taskId)}.${"A".repeat(43)}`, {
        [question.key]: { action: "accept", content: { seq_2: "approve", seq_3: "approve" } },
      }),
    ).rejects.toThrow(/Only the task id this server gave/);
    expect(served.calls.filter((call) => call.name === "delete-note")).toEqual([]);
    expect((await served.runtime.execution(started.executionId))?.status).toBe("paused");
  });

  it("tasks/cancel ends a paused task as cancelled; an unknown task is an error", async () => {
    const served = await serveHttp();
    const client = await served.connect("sdk2-agent", true);
    const created = await executeAsTask(client, DELETE_TWO);
    await waitForTask(client, created.taskId, ["input_required"]);
    await client.request(
      { method: "tasks/cancel", params: { taskId: created.taskId } } as never,
      (await import("zod")).looseObject({}),
    );
    expect((await waitForTask(client, created.taskId, ["cancelled"])).statusMessage).toMatch(/cancelled/);
    await expect(getTask(client, randomUUID())).rejects.toThrow(/Task not found/);
  });

  it("without the tasks extension execute answers in the call; log messages come at the level the request asks", async () => {
    const served = await serveHttp();
    const client = await served.connect("sdk2-agent", true, false);
    const logged: unknown[] = [];
    client.setNotificationHandler("notifications/message", (notification) => {
      logged.push(notification.params);
    });
    const answer = await client.callTool({
      name: "execute",
      arguments: {
        code: `async () => { console.log("hello from the program"); return (await notes.list_notes()).length; }`,
      },
      _meta: { "io.modelcontextprotocol/logLevel": "info" },
    });
    expect(answer.structuredContent, JSON.stringify(answer)).toMatchObject({ status: "completed", result: 0 });
    expect(logged).toContainEqual({ level: "info", logger: "console", data: "hello from the program" });
    // debug (each call's start and end) is below the asked level.
    expect(logged.some((entry) => (entry as { level: string }).level === "debug")).toBe(false);
  });
});

describe("issue 43, R-MCP-T2: edit inside the task", () => {
  it("R-AP-9: edit runs the call with the arguments the client gives; arguments the tool's schema refuses decide nothing", async () => {
    const served = await serveHttp();
    const client = await served.connect("sdk2-agent", true);
    const created = await executeAsTask(
      client,
      `async () => {
        const one = await notes.add_note({ title: "one" });
        await notes.add_note({ title: "two" });
        await notes.delete_note({ id: one.id });
        return (await notes.list_notes()).map((note) => note.title);
      }`,
    );
    const question = questionOf(await waitForTask(client, created.taskId, ["input_required"]));
    await expect(
      updateTask(client, created.taskId, {
        [question.key]: { action: "accept", content: { seq_2: "edit", args_2: '{"id":"two"}' } },
      }),
    ).rejects.toThrow(/Nothing was decided/);
    await expect(
      updateTask(client, created.taskId, { [question.key]: { action: "accept", content: { seq_2: "edit" } } }),
    ).rejects.toThrow(/edit without args_2/);
    expect((await getTask(client, created.taskId)).status).toBe("input_required");
    await updateTask(client, created.taskId, {
      [question.key]: { action: "accept", content: { seq_2: "edit", args_2: '{"id":2}', reason: "the other one" } },
    });
    const done = await waitForTask(client, created.taskId, ["completed"]);
    const structured = (done.result as { structuredContent: Record<string, unknown> }).structuredContent;
    expect(structured.result).toEqual(["one"]);
    expect(structured.decided).toMatchObject([{ seq: 2, decision: "edited", outcome: "ran" }]);
    expect(served.calls.filter((call) => call.name === "delete-note").map((call) => call.args)).toEqual([{ id: 2 }]);
  });
});

describe("issue 43: stateless discovery", () => {
  it("server/discover, raw: the 2026 revision, the tasks extension and logging, with no session opened", async () => {
    const served = await serveHttp();
    const envelope = {
      "io.modelcontextprotocol/protocolVersion": "2026-07-28",
      "io.modelcontextprotocol/clientCapabilities": {},
    };
    const answer = await fetch(served.listener.url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "server/discover",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "server/discover", params: { _meta: envelope } }),
    });
    expect(answer.status).toBe(200);
    const body = (await answer.json()) as { result: Record<string, unknown> };
    expect(body.result).toMatchObject({
      supportedVersions: ["2026-07-28"],
      capabilities: { logging: {}, extensions: { "io.modelcontextprotocol/tasks": {} } },
    });
    expect(served.listener.sessions()).toBe(0);
    // A 2026 request without the header that names its task is refused by the revision's rules.
    const unnamed = await fetch(served.listener.url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tasks/get",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tasks/get", params: { taskId: "x", _meta: envelope } }),
    });
    expect(unnamed.status).toBe(400);
  });
});

describe("issue 43: the 2025-11-25 protocol on the same endpoint, with logging/setLevel", () => {
  it("an SDK 1.32 client gets a session; after setLevel it hears the program's console lines as log messages, not before", async () => {
    const served = await serveHttp();
    const client = new LegacyClient({ name: "legacy", version: "1.0.0" });
    await client.connect(new LegacyHttpTransport(served.listener.url));
    cleanups.push(() => client.close());
    const logged: unknown[] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
      logged.push(notification.params);
    });
    const code = `async () => { console.log("counted"); return (await notes.list_notes()).length; }`;
    await client.callTool({ name: "execute", arguments: { code } });
    expect(logged).toEqual([]);
    await client.setLoggingLevel("debug");
    await client.callTool({ name: "execute", arguments: { code } });
    expect(logged).toContainEqual({ level: "info", logger: "console", data: "counted" });
    expect(logged).toContainEqual({
      level: "debug",
      logger: "codemode",
      data: "call started: notes.list_notes (seq 0)",
    });
    expect(served.listener.sessions()).toBe(1);
  });
});

describe("issue 43, R-MCP-T2: a 2026-07-28 client over stdio (the codemode-mcp bin)", () => {
  it(
    "R-AP-8: the task pauses, one create approved and one denied through tasks/update, and it completes with both",
    async () => {
      const directory = scratchDirectory();
      const transport = new StdioClientTransport({
        command: process.execPath,
        args: [BIN, "--config", CONFIG, "--elicitation"],
        env: {
          ...(process.env as Record<string, string>),
          CODEMODE_TEST_STORE: `sqlite:${join(directory, "sdk2.sqlite")}`,
          CODEMODE_TEST_NAME: `mcp-sdk2-${randomUUID().slice(0, 8)}`,
        },
        stderr: "pipe",
      });
      const client: Client = await modernClient(transport, "sdk2-stdio", true);
      cleanups.push(() => client.close());
      expect(client.getProtocolEra()).toBe("modern");
      const created = await executeAsTask(
        client,
        `async () => {
          const settled = await Promise.allSettled([tickets.create({ title: "A" }), tickets.create({ title: "B" })]);
          return settled.map((each) => each.status === "fulfilled" ? each.value : each.reason.name + ": " + each.reason.message);
        }`,
      );
      const question = questionOf(await waitForTask(client, created.taskId, ["input_required"]));
      expect(question.properties).toEqual(["seq_0", "args_0", "seq_1", "args_1", "reason"]);
      await updateTask(client, created.taskId, {
        [question.key]: { action: "accept", content: { seq_0: "approve", seq_1: "deny" } },
      });
      const done = await waitForTask(client, created.taskId, ["completed"]);
      const result = (done.result as { structuredContent: { result: unknown[] } }).structuredContent.result;
      expect(result[0]).toEqual({ id: 101, title: "A" });
      expect(String(result[1])).toMatch(/ApprovalDenied/);
    },
    TIMEOUT,
  );
});
