/**
 * Issue 27: Code Mode over MCP for long runs, with MCP tasks (task id = execution id). Over stdio,
 * the `codemode-mcp` bin is a child process (it imports the BUILT packages: run `npm run build`
 * first) over a SQLite file that the `codemode` CLI and a second server process share; in memory,
 * the same server over a runtime in this process.
 */
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createCodemodeRuntime } from "@codemode/core";
import { createCodemodeMcpServer } from "@codemode/core/mcp";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { CallToolResultSchema, CreateTaskResultSchema, type Task } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it } from "vitest";
import { CONFIG as CLI_CONFIG, codemode, scratchDirectory, TIMEOUT } from "./cli-fixtures/run-cli.ts";
import { FREE_PROGRAM, GATED_PROGRAM, tickets } from "./cli-fixtures/tickets.ts";
import { structuredOf } from "./mcp-fixtures/codemode-setup.ts";

const BIN = fileURLToPath(new URL("../packages/core/dist/mcp/bin.js", import.meta.url));
const CONFIG = fileURLToPath(new URL("./mcp-fixtures/tasks-config.ts", import.meta.url));
const directory = scratchDirectory();

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** `execute` as a task, as a client that supports tasks asks for it. */
async function executeAsTask(client: Client, code: string): Promise<Task> {
  const created = await client.request(
    { method: "tools/call", params: { name: "execute", arguments: { code } } },
    CreateTaskResultSchema,
    { task: { ttl: 3_600_000 } },
  );
  return created.task;
}

/** Polls tasks/get until the task leaves `working`. */
async function settled(client: Client, taskId: string): Promise<Task> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const task = await client.experimental.tasks.getTask(taskId);
    if (task.status !== "working") return task;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`task ${taskId} stayed working`);
}

/** A `codemode-mcp --http` process on a free port, and a client connected to it. */
async function serveHttp(env: Record<string, string>): Promise<{ client: Client; stop: () => Promise<void> }> {
  const server = spawn(process.execPath, [BIN, "--config", CONFIG, "--http", "0"], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "ignore", "pipe"],
  });
  const exited = new Promise<void>((resolve) => server.once("exit", () => resolve()));
  const stop = async () => {
    server.kill("SIGTERM");
    await exited;
  };
  cleanups.push(stop);
  let stderr = "";
  const url = await new Promise<URL>((resolve, reject) => {
    server.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
      const match = /serving (http:\/\/\S+)/.exec(stderr);
      if (match) resolve(new URL(match[1]!));
    });
    server.once("exit", () => reject(new Error(`codemode-mcp exited: ${stderr}`)));
  });
  const client = new Client({ name: "tasks-http-client", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(url));
  cleanups.push(() => client.close());
  return { client, stop };
}

describe("issue 27: MCP tasks over stdio, across processes", () => {
  const store = `sqlite:${join(directory, "tasks.sqlite")}`;
  const env = { CODEMODE_TEST_STORE: store, CODEMODE_TEST_NAME: `mcp-tasks-${randomUUID().slice(0, 8)}` };

  async function launch(): Promise<Client> {
    const client = new Client({ name: "tasks-test-client", version: "1.0.0" });
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, "--config", CONFIG],
      env: { ...(process.env as Record<string, string>), ...env },
      stderr: "pipe",
    });
    cleanups.push(() => client.close());
    await client.connect(transport);
    return client;
  }

  it(
    "a paused run answers a task; input_required; approved from the CLI; a new server process answers tasks/result",
    async () => {
      const first = await launch();
      expect(first.getServerCapabilities()?.tasks).toMatchObject({ requests: { tools: { call: {} } } });
      const execute = (await first.listTools()).tools.find((tool) => tool.name === "execute");
      expect(execute?.execution).toEqual({ taskSupport: "optional" });

      const created = await executeAsTask(first, GATED_PROGRAM);
      const paused = await settled(first, created.taskId);
      expect(paused).toMatchObject({ status: "input_required", pollInterval: 200 });
      expect(paused.statusMessage).toContain(`codemode approve ${created.taskId}`);
      expect(paused.statusMessage).toContain("tickets.create");
      await first.close();

      const approved = await codemode(["--config", CLI_CONFIG, "approve", created.taskId], env);
      expect(approved.code, approved.stderr).toBe(0);

      const second = await launch();
      expect(await second.experimental.tasks.getTask(created.taskId)).toMatchObject({ status: "completed" });
      const result = await second.experimental.tasks.getTaskResult(created.taskId, CallToolResultSchema);
      expect(structuredOf(result)).toMatchObject({ status: "completed", executionId: created.taskId, result: 101 });
    },
    TIMEOUT,
  );
});

describe("issue 27: MCP tasks over Streamable HTTP, across processes", () => {
  const store = `sqlite:${join(directory, "tasks-http.sqlite")}`;
  const env = { CODEMODE_TEST_STORE: store, CODEMODE_TEST_NAME: `mcp-tasks-http-${randomUUID().slice(0, 8)}` };

  it(
    "a paused run answers a task; approved from the CLI; the client comes back to a new server process and gets the result",
    async () => {
      const first = await serveHttp(env);
      const created = await executeAsTask(first.client, GATED_PROGRAM);
      expect(await settled(first.client, created.taskId)).toMatchObject({ status: "input_required" });
      await first.client.close();
      await first.stop();

      const approved = await codemode(["--config", CLI_CONFIG, "approve", created.taskId], env);
      expect(approved.code, approved.stderr).toBe(0);

      const second = await serveHttp(env);
      expect(await second.client.experimental.tasks.getTask(created.taskId)).toMatchObject({ status: "completed" });
      const result = await second.client.experimental.tasks.getTaskResult(created.taskId, CallToolResultSchema);
      expect(structuredOf(result)).toMatchObject({ status: "completed", executionId: created.taskId, result: 101 });
    },
    TIMEOUT,
  );
});

describe("issue 27: tasks/cancel from a new server process", () => {
  const store = `sqlite:${join(directory, "tasks-cancel.sqlite")}`;
  const env = { CODEMODE_TEST_STORE: store, CODEMODE_TEST_NAME: `mcp-cancel-${randomUUID().slice(0, 8)}` };

  it(
    "a task paused in one server process is cancelled through another: the run ends rejected, and a plain client still gets today's answer",
    async () => {
      const first = await serveHttp(env);
      const created = await executeAsTask(first.client, GATED_PROGRAM);
      expect(await settled(first.client, created.taskId)).toMatchObject({ status: "input_required" });
      await first.client.close();
      await first.stop();
      const second = await serveHttp(env);
      expect(await second.client.experimental.tasks.cancelTask(created.taskId)).toMatchObject({ status: "cancelled" });
      expect(await second.client.experimental.tasks.getTask(created.taskId)).toMatchObject({ status: "cancelled" });
      const shown = await codemode(["--config", CLI_CONFIG, "show", created.taskId, "--json"], env);
      expect(JSON.parse(shown.stdout)).toMatchObject({ status: "rejected" });
      const plain = structuredOf(await second.client.callTool({ name: "execute", arguments: { code: GATED_PROGRAM } }));
      expect(plain).toMatchObject({ status: "paused" });
    },
    TIMEOUT,
  );
});

describe("issue 27: tasks/cancel stops a running pass in another server process", () => {
  const store = `sqlite:${join(directory, "tasks-cancel-running.sqlite")}`;
  const env = { CODEMODE_TEST_STORE: store, CODEMODE_TEST_NAME: `mcp-cancel-run-${randomUUID().slice(0, 8)}` };

  it(
    "a task whose program never yields, run by one server process, is cancelled through another: the pass stops and the run ends rejected (CANCELLED)",
    async () => {
      const first = await serveHttp(env);
      const created = await executeAsTask(first.client, "async () => { for (;;) {} }");
      expect(await first.client.experimental.tasks.getTask(created.taskId)).toMatchObject({ status: "working" });
      const second = await serveHttp(env);
      // The second process cannot reach the pass: it leaves a request in the store, which the
      // first reads within a second; the answer comes once the run has ended.
      expect(await second.client.experimental.tasks.cancelTask(created.taskId)).toMatchObject({ status: "cancelled" });
      const shown = await codemode(["--config", CLI_CONFIG, "show", created.taskId, "--json"], env);
      expect(JSON.parse(shown.stdout)).toMatchObject({ status: "rejected", errorCode: "CANCELLED" });
      const task = await first.client.experimental.tasks.getTask(created.taskId);
      expect(task).toMatchObject({ status: "cancelled" });
      expect(task.statusMessage).toContain("cancelled by MCP client (tasks/cancel)");
      const result = await first.client.experimental.tasks.getTaskResult(created.taskId, CallToolResultSchema);
      expect(structuredOf(result)).toMatchObject({ status: "error", code: "CANCELLED", executionId: created.taskId });
      // The first server process is still serving: its pass ended, not the process.
      const after = structuredOf(await first.client.callTool({ name: "execute", arguments: { code: FREE_PROGRAM } }));
      expect(after).toMatchObject({ status: "completed" });
    },
    TIMEOUT,
  );
});

describe("issue 27: a task's progress over Streamable HTTP", () => {
  const store = `sqlite:${join(directory, "tasks-progress.sqlite")}`;
  const env = { CODEMODE_TEST_STORE: store, CODEMODE_TEST_NAME: `mcp-progress-http-${randomUUID().slice(0, 8)}` };

  it(
    "notifications arrive in order after the task is returned, while a 20-call program runs",
    async () => {
      const { client } = await serveHttp(env);
      const code =
        "async () => { let found = 0; for (let i = 0; i < 20; i++) found += (await tickets.list({ status: 's' + i })).length; return found; }";
      const messages: string[] = [];
      const created = await client.request(
        { method: "tools/call", params: { name: "execute", arguments: { code } } },
        CreateTaskResultSchema,
        { task: { ttl: 3_600_000 }, onprogress: (note) => messages.push(String(note.message)) },
      );
      const ended = "call ended: tickets.list (seq 19, applied)";
      for (let attempt = 0; attempt < 200 && !messages.includes(ended); attempt++)
        await new Promise((resolve) => setTimeout(resolve, 50));
      const calls = messages.filter((message) => message.startsWith("call "));
      expect(calls).toEqual(
        Array.from({ length: 20 }, (_, seq) => [
          `call started: tickets.list (seq ${seq})`,
          `call ended: tickets.list (seq ${seq}, applied)`,
        ]).flat(),
      );
      const result = await client.experimental.tasks.getTaskResult(created.task.taskId, CallToolResultSchema);
      expect(structuredOf(result)).toMatchObject({ status: "completed", result: 20 });
    },
    TIMEOUT,
  );
});

describe("issue 27: MCP tasks in memory", () => {
  async function connect(options: Parameters<typeof createCodemodeMcpServer>[1] = {}) {
    const runtime = createCodemodeRuntime({ connectors: [tickets] });
    const mcp = createCodemodeMcpServer(runtime, { pollIntervalMs: 50, ...options });
    const client = new Client({ name: "tasks-test-client", version: "1.0.0" });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await mcp.connect(serverSide);
    await client.connect(clientSide);
    cleanups.push(async () => {
      await client.close();
      await mcp.close();
      await runtime.close();
    });
    return { runtime, client };
  }

  it("tasks/cancel rejects a paused run: the ticket is never opened, the task ends cancelled", async () => {
    const { runtime, client } = await connect();
    const created = await executeAsTask(client, GATED_PROGRAM);
    expect(await settled(client, created.taskId)).toMatchObject({ status: "input_required" });
    expect(await client.experimental.tasks.cancelTask(created.taskId)).toMatchObject({ status: "cancelled" });
    expect(await runtime.execution(created.taskId)).toMatchObject({ status: "rejected" });
    const result = await client.experimental.tasks.getTaskResult(created.taskId, CallToolResultSchema);
    // Read back from the store, a cancelled run is the runtime's stored outcome: an error that says who ended it.
    expect(structuredOf(result)).toMatchObject({ status: "error", code: "CANCELLED", executionId: created.taskId });
    expect(String(structuredOf(result).error)).toContain("cancelled the task");
    await expect(client.experimental.tasks.cancelTask(created.taskId)).rejects.toThrow(/terminal/);
  });

  it("a task's progress follows the run past its pause: once approved, the rest of the run is reported too", async () => {
    const { runtime, client } = await connect();
    const messages: string[] = [];
    const created = await client.request(
      { method: "tools/call", params: { name: "execute", arguments: { code: GATED_PROGRAM } } },
      CreateTaskResultSchema,
      { task: { ttl: 3_600_000 }, onprogress: (note) => messages.push(String(note.message)) },
    );
    const { taskId } = created.task;
    const pausedNote = "paused: waiting for approval of tickets.create (seq 1)";
    for (let attempt = 0; attempt < 200 && !messages.includes(pausedNote); attempt++)
      await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await runtime.approve({ executionId: taskId })).toMatchObject({ status: "completed" });
    const ended = "call ended: tickets.create (seq 1, applied)";
    for (let attempt = 0; attempt < 200 && !messages.includes(ended); attempt++)
      await new Promise((resolve) => setTimeout(resolve, 20));
    expect(messages.filter((message) => !message.startsWith("console:"))).toEqual([
      "call started: tickets.list (seq 0)",
      "call ended: tickets.list (seq 0, applied)",
      "call started: tickets.create (seq 1)",
      pausedNote,
      ended,
    ]);
  });

  it("with taskAfterMs a quick run's task has already completed; tasks/list hands out no ids (an id is a bearer token)", async () => {
    const { client } = await connect({ taskAfterMs: 5_000 });
    const created = await executeAsTask(client, FREE_PROGRAM);
    expect(created.status).toBe("completed");
    const result = await client.experimental.tasks.getTaskResult(created.taskId, CallToolResultSchema);
    expect(structuredOf(result)).toMatchObject({ status: "completed", result: 1 });
    const listed = await client.experimental.tasks.listTasks().catch(() => ({ tasks: [] }));
    expect(listed.tasks).toEqual([]);
  });

  it("a client without task support gets today's answer: paused, with the execution id", async () => {
    const { client } = await connect();
    const answer = structuredOf(await client.callTool({ name: "execute", arguments: { code: GATED_PROGRAM } }));
    expect(answer).toMatchObject({ status: "paused", pending: [{ connector: "tickets", method: "create" }] });
    expect(answer.message).toContain(`codemode approve ${answer.executionId}`);
  });

  it("tasks: false serves no tasks capability and no task support on execute", async () => {
    const { client } = await connect({ tasks: false });
    expect(client.getServerCapabilities()?.tasks).toBeUndefined();
    const execute = (await client.listTools()).tools.find((tool) => tool.name === "execute");
    expect(execute?.execution).toBeUndefined();
  });
});
