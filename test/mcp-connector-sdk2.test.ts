/**
 * Issue 43 ("Serve and consume both protocols"), R-CON-5: mcpConnector takes a client of the MCP
 * TypeScript SDK 2 (`@modelcontextprotocol/client`) as it takes one of SDK 1.32, and a 2025-11-25
 * server's tools behave the same through either: listing and its bounds, approvals from
 * annotations, results, the idempotency key, instructions, list_changed and 2025-11-25 tasks. Real
 * SDK 1.32 servers, reached in memory and over Streamable HTTP on 127.0.0.1.
 */
import { type CodemodeRuntime, createCodemodeRuntime } from "@codemode/core";
import {
  IDEMPOTENCY_KEY_META,
  MAX_SERVER_INSTRUCTIONS_CHARS,
  McpConnectorError,
  mcpConnector,
} from "@codemode/core/mcp";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { Client as Sdk1Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it } from "vitest";
import { connectInMemory, createNotesServer } from "./mcp-fixtures/notes-server.ts";
import { createPagedServer, echoTool } from "./mcp-fixtures/paged-server.ts";
import { type Sdk1HttpServer, serveSdk1OverHttp } from "./mcp-fixtures/sdk1-http.ts";
import { createTaskServer, expectSlowReportAsTask } from "./mcp-fixtures/task-server.ts";

const runtimes: CodemodeRuntime[] = [];
const clients: Array<{ close(): Promise<void> }> = [];
const servers: Sdk1HttpServer[] = [];
afterEach(async () => {
  await Promise.all(runtimes.splice(0).map((runtime) => runtime.close()));
  await Promise.all(clients.splice(0).map((client) => client.close()));
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

/** An SDK 2 client of an SDK 1.32 server, in memory; "auto" tries 2026-07-28 first and falls back. */
async function sdk2InMemory(server: { connect(transport: InMemoryTransport): Promise<unknown> }): Promise<Client> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: "sdk2-test-client", version: "1.0.0" }, { versionNegotiation: { mode: "auto" } });
  await client.connect(clientSide as never);
  clients.push(client);
  return client;
}

function runtimeOf(connector: Awaited<ReturnType<typeof mcpConnector>>, limits?: { timeoutMs: number }) {
  const runtime = createCodemodeRuntime({ connectors: [connector], ...(limits ? { limits } : {}) });
  runtimes.push(runtime);
  return runtime;
}

const NOTES_PROGRAM = `async () => {
  const added = await notes.add_note({ title: "Milk", body: "2 litres" });
  const read = await notes.get_note({ id: added.id });
  const hello = await notes.greet({ name: "Ann" });
  const list = await notes.list_notes();
  let failure = null;
  try { await notes.fail(); } catch (error) { failure = error.message; }
  return { added, read, hello, list, failure };
}`;

const NOTES_RESULT = {
  added: { id: 1, title: "Milk" },
  read: { id: 1, title: "Milk", body: "2 litres" },
  hello: "Hello, Ann",
  list: [{ id: 1, title: "Milk" }],
  failure: "the disk is full",
};

describe("issue 43, R-CON-5: an SDK 2 client of a 2025-11-25 server (SDK 1.32), in memory", () => {
  it("a program calls the notes server's tools through an SDK 2 client and gets unwrapped results, isError as a rejection", async () => {
    const notesServer = createNotesServer();
    const client = await sdk2InMemory(notesServer.server);
    expect(client.getProtocolEra()).toBe("legacy");
    const runtime = runtimeOf(await mcpConnector({ name: "notes", client, approval: "destructive" }));
    const outcome = await runtime.execute({ code: NOTES_PROGRAM });
    expect(outcome).toMatchObject({ status: "completed", result: NOTES_RESULT });
    expect(notesServer.calls[0]?.meta).toMatchObject({ [IDEMPOTENCY_KEY_META]: `${outcome.executionId}:0` });
  });

  it("makes the very same methods as an SDK 1.32 client: names, schemas, approvals from annotations, read-only, instructions", async () => {
    const sdk1 = await connectInMemory(createNotesServer().server);
    clients.push(sdk1);
    const fromSdk1 = await mcpConnector({ name: "notes", client: sdk1 });
    const fromSdk2 = await mcpConnector({ name: "notes", client: await sdk2InMemory(createNotesServer().server) });
    const shape = (connector: typeof fromSdk1) =>
      Object.fromEntries(
        Object.entries(connector.tools).map(([method, { execute: _execute, ...definition }]) => [method, definition]),
      );
    expect(shape(fromSdk2)).toEqual(shape(fromSdk1));
    expect(fromSdk2.tools.delete_note?.requiresApproval).toBe(true);
    expect(fromSdk2.tools.get_note?.readOnly).toBe(true);
    expect(fromSdk2.mcp.tools.delete_note).toMatchObject({ destructive: true, idempotent: true });
    expect(fromSdk2.instructions).toBe("Short notes with a title and a body.");
  });

  it("a destructive tool pauses for approval and runs once approved, as with SDK 1.32", async () => {
    const notesServer = createNotesServer();
    const runtime = runtimeOf(await mcpConnector({ name: "notes", client: await sdk2InMemory(notesServer.server) }));
    const paused = await runtime.execute({
      code: `async () => { const { id } = await notes.add_note({ title: "Old" }); return notes.delete_note({ id }); }`,
    });
    expect(paused).toMatchObject({ status: "paused", pending: [{ method: "delete_note", args: { id: 1 } }] });
    expect(await runtime.approve({ executionId: paused.executionId })).toMatchObject({
      status: "completed",
      result: "deleted 1",
    });
  });

  it("cuts a server's long instructions to the connector's bound", async () => {
    const server = new McpServer({ name: "wordy", version: "1.0.0" }, { instructions: "x".repeat(50_000) });
    server.registerTool("noop", { description: "Does nothing." }, async () => ({ content: [] }));
    const connector = await mcpConnector({ name: "wordy", client: await sdk2InMemory(server) });
    expect(connector.instructions!.length).toBeLessThanOrEqual(MAX_SERVER_INSTRUCTIONS_CHARS);
  });

  it("pages tools/list itself (SDK 2's listTools() would walk every page on its own) and refuses a cursor given twice", async () => {
    const paged = createPagedServer(
      ["a", "b", "c", "d", "e"].map((name) => echoTool(name)),
      2,
    );
    const connector = await mcpConnector({ name: "paged", client: await sdk2InMemory(paged.server) });
    expect(Object.keys(connector.tools)).toEqual(["a", "b", "c", "d", "e"]);
    expect(paged.listed).toEqual([undefined, "2", "4"]);

    const looping = new Server({ name: "looping", version: "1.0.0" }, { capabilities: { tools: {} } });
    looping.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [echoTool("again")], nextCursor: "same" }));
    const refused = await mcpConnector({ name: "looping", client: await sdk2InMemory(looping) }).catch(
      (error) => error,
    );
    expect(McpConnectorError.isInstance(refused)).toBe(true);
    expect(refused.message).toMatch(/repeated the cursor "same"/);
  });

  it("follows notifications/tools/list_changed, and keeps the application's own handler on the SDK 2 client", async () => {
    const paged = createPagedServer([echoTool("first")]);
    const client = await sdk2InMemory(paged.server);
    let theirs = 0;
    client.setNotificationHandler("notifications/tools/list_changed", () => {
      theirs += 1;
    });
    let changed: () => void = () => {};
    const refreshed = new Promise<void>((resolve) => (changed = resolve));
    const connector = await mcpConnector({ name: "paged", client, approval: "never", onToolsChanged: () => changed() });
    await paged.setTools([echoTool("first"), echoTool("second-one")]);
    await refreshed;
    expect(Object.keys(connector.tools)).toEqual(["first", "second_one"]);
    expect(theirs).toBe(1);
    const runtime = runtimeOf(connector);
    expect(await runtime.execute({ code: `async () => paged.second_one({ text: "b" })` })).toMatchObject({
      status: "completed",
      result: { tool: "second-one", args: { text: "b" } },
    });
  });
});

describe("issue 43, R-CON-5: an SDK 2 client calls a 2025-11-25 server's tools as tasks (SEP-1686), in memory", () => {
  async function jobsSetup(options: { taskTimeoutMs?: number; passTimeoutMs?: number; workMs?: number } = {}) {
    const jobsServer = createTaskServer(options.workMs === undefined ? {} : { workMs: options.workMs });
    const jobs = await mcpConnector({
      name: "jobs",
      client: await sdk2InMemory(jobsServer.server),
      approval: "never",
      // Well under the tasks' work: a plain tools/call would be cut.
      timeoutMs: 100,
      ...(options.taskTimeoutMs ? { taskTimeoutMs: options.taskTimeoutMs } : {}),
    });
    return {
      ...jobsServer,
      runtime: runtimeOf(jobs, options.passTimeoutMs ? { timeoutMs: options.passTimeoutMs } : undefined),
    };
  }

  it("awaits a task that outlasts the per-request timeout, and the program gets its result", async () => {
    const { runtime, calls } = await jobsSetup();
    await expectSlowReportAsTask(runtime, calls);
  });

  it("rejects the program's call with the failed task's message, and calls a tool without taskSupport plainly", async () => {
    const { runtime, calls } = await jobsSetup();
    const outcome = await runtime.execute({
      code: `async () => {
        const echoed = await jobs.echo({ text: "hi" });
        try { await jobs.broken_job({ text: "x" }); return "no error"; } catch (error) { return [echoed, error.message]; }
      }`,
    });
    expect(outcome).toMatchObject({
      status: "completed",
      result: [{ tool: "echo", text: "hi" }, "the build farm is on fire"],
    });
    expect(calls.map((call) => [call.name, call.asTask])).toEqual([
      ["echo", false],
      ["broken-job", true],
    ]);
  });

  it("gives up after taskTimeoutMs and cancels the upstream task", async () => {
    const { runtime, taskStatuses } = await jobsSetup({ taskTimeoutMs: 150, workMs: 5_000 });
    const outcome = await runtime.execute({
      code: `async () => { try { await jobs.slow_report({ text: "late" }); return "no error"; } catch (error) { return error.message; } }`,
    });
    expect(outcome).toMatchObject({
      status: "completed",
      result: "jobs.slow-report: the upstream task took longer than 150 ms",
    });
    expect(await taskStatuses()).toEqual(["cancelled"]);
  });

  it("a cancelled run stops waiting and cancels the upstream task (runtime.cancel)", async () => {
    const { runtime, calls, taskStatuses } = await jobsSetup({ workMs: 5_000 });
    const running = runtime.execute({ code: `async () => jobs.slow_report({ text: "never mind" })` });
    while (calls.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    const [listed] = (await runtime.executions({ status: "running" })).items;
    await runtime.cancel({ executionId: listed!.id, by: "ops" });
    const outcome = await running;
    expect(outcome).toMatchObject({ status: "error", code: "CANCELLED" });
    expect(outcome.calls?.map((call) => call.error)).toEqual([
      "jobs.slow-report: the run was cancelled while the upstream task ran",
    ]);
    let statuses = await taskStatuses();
    while (statuses[0] === "working") {
      await new Promise((resolve) => setTimeout(resolve, 5));
      statuses = await taskStatuses();
    }
    expect(statuses).toEqual(["cancelled"]);
  });
});

describe("issue 43, R-CON-5: an SDK 2 client of a 2025-11-25 server (SDK 1.32) over Streamable HTTP", () => {
  it("negotiates down to 2025-11-25 and the program gets the notes tools' results", async () => {
    const notesServers: Array<ReturnType<typeof createNotesServer>> = [];
    const http = await serveSdk1OverHttp(() => {
      const notesServer = createNotesServer();
      notesServers.push(notesServer);
      return notesServer.server;
    });
    servers.push(http);
    const client = new Client({ name: "sdk2-http", version: "1.0.0" }, { versionNegotiation: { mode: "auto" } });
    await client.connect(new StreamableHTTPClientTransport(http.url));
    clients.push(client);
    expect(client.getProtocolEra()).toBe("legacy");
    const runtime = runtimeOf(await mcpConnector({ name: "notes", client, approval: "destructive" }));
    const outcome = await runtime.execute({ code: NOTES_PROGRAM });
    expect(outcome).toMatchObject({ status: "completed", result: NOTES_RESULT });
    expect(notesServers.flatMap((server) => server.calls).map((call) => call.name)).toEqual([
      "add-note",
      "get-note",
      "greet",
      "list-notes",
      "fail",
    ]);
  });

  it("calls a tool the server runs as a 2025-11-25 task over HTTP, past the per-request timeout", async () => {
    const jobsServers: Array<ReturnType<typeof createTaskServer>> = [];
    const http = await serveSdk1OverHttp(() => {
      const jobsServer = createTaskServer();
      jobsServers.push(jobsServer);
      return jobsServer.server;
    });
    servers.push(http);
    const client = new Client({ name: "sdk2-http", version: "1.0.0" }, { versionNegotiation: { mode: "auto" } });
    await client.connect(new StreamableHTTPClientTransport(http.url));
    clients.push(client);
    const runtime = runtimeOf(await mcpConnector({ name: "jobs", client, approval: "never", timeoutMs: 100 }));
    const outcome = await runtime.execute({ code: `async () => jobs.required_job({ text: "deploy" })` });
    expect(outcome).toMatchObject({ status: "completed", result: { tool: "required-job", text: "deploy" } });
    expect(jobsServers.flatMap((server) => server.calls).map((call) => call.asTask)).toEqual([true]);
  });

  it("an SDK 1.32 client of the same server still works as before", async () => {
    const http = await serveSdk1OverHttp(() => createNotesServer().server);
    servers.push(http);
    const { StreamableHTTPClientTransport: Sdk1Http } = await import(
      "@modelcontextprotocol/sdk/client/streamableHttp.js"
    );
    const client = new Sdk1Client({ name: "sdk1-http", version: "1.0.0" });
    await client.connect(new Sdk1Http(http.url));
    clients.push(client);
    const runtime = runtimeOf(await mcpConnector({ name: "notes", client, approval: "destructive" }));
    expect(await runtime.execute({ code: NOTES_PROGRAM })).toMatchObject({ status: "completed", result: NOTES_RESULT });
  });
});
