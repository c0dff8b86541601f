/**
 * R-CON-5, MCP in: an MCP server's tools as a connector. Real servers built with the SDK, reached
 * over the in-memory transport by the SDK's own Client.
 */
import { type CodemodeRuntime, createCodemodeRuntime } from "@codemode/core";
import { IDEMPOTENCY_KEY_META, McpConnectorError, mcpConnector } from "@codemode/core/mcp";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it } from "vitest";
import { connectInMemory, createNotesServer } from "./mcp-fixtures/notes-server.ts";
import { createPagedServer, echoTool } from "./mcp-fixtures/paged-server.ts";

const runtimes: CodemodeRuntime[] = [];
const clients: Client[] = [];
afterEach(async () => {
  await Promise.all(runtimes.splice(0).map((runtime) => runtime.close()));
  await Promise.all(clients.splice(0).map((client) => client.close()));
});

async function notesSetup(options: Partial<Parameters<typeof mcpConnector>[0]> = {}) {
  const notesServer = createNotesServer();
  const client = await connectInMemory(notesServer.server);
  clients.push(client);
  const notes = await mcpConnector({ name: "notes", client, ...options });
  const runtime = createCodemodeRuntime({ connectors: [notes] });
  runtimes.push(runtime);
  return { ...notesServer, client, connector: notes, runtime };
}

async function pagedClient(server: Server) {
  const client = await connectInMemory(server);
  clients.push(client);
  return client;
}

describe("mcpConnector: listing", () => {
  it("follows tools/list pagination to the last page", async () => {
    const paged = createPagedServer(
      ["a", "b", "c", "d", "e"].map((name) => echoTool(name)),
      2,
    );
    const connector = await mcpConnector({ name: "paged", client: await pagedClient(paged.server) });
    expect(Object.keys(connector.tools)).toEqual(["a", "b", "c", "d", "e"]);
    expect(paged.listed).toEqual([undefined, "2", "4"]);
  });

  it("sanitises tool names to identifiers: add-note becomes notes.add_note", async () => {
    const { connector } = await notesSetup();
    expect(Object.keys(connector.tools).sort()).toEqual([
      "add_note",
      "archive_note",
      "delete_note",
      "fail",
      "get_note",
      "greet",
      "list_notes",
    ]);
    expect(connector.mcp.tools.add_note).toMatchObject({ name: "add-note", title: "Add note" });
  });

  it("refuses two tools that sanitise to one name, naming both; leaving one out resolves it", async () => {
    const paged = createPagedServer([echoTool("add-note"), echoTool("add_note"), echoTool("list")]);
    const client = await pagedClient(paged.server);
    const refused = mcpConnector({ name: "notes", client });
    await expect(refused).rejects.toThrow(McpConnectorError);
    await expect(refused).rejects.toThrow(/"add-note" and "add_note" would both be notes\.add_note/);
    const connector = await mcpConnector({
      name: "notes",
      client,
      tool: (name) => (name === "add-note" ? null : undefined),
    });
    expect(Object.keys(connector.tools)).toEqual(["add_note", "list"]);
    expect(connector.mcp.tools.add_note?.name).toBe("add_note");
  });

  it("turns the server's schemas into types: describe shows the input and output of notes.add_note", async () => {
    const { runtime } = await notesSetup();
    const described = await runtime.describe("notes.add_note");
    expect(described).toMatchObject({
      kind: "method",
      requiresApproval: false,
      description: expect.stringContaining("Adds a note"),
    });
    const declaration = "declaration" in described ? described.declaration : "";
    expect(declaration).toMatch(/title: string/);
    expect(declaration).toMatch(/body\?: string/);
    expect(declaration).toMatch(/id: number/);
  });

  it("takes the server's instructions unless given others", async () => {
    const { connector } = await notesSetup();
    expect(connector.instructions).toBe("Short notes with a title and a body.");
    const { connector: other } = await notesSetup({ instructions: "Team notes." });
    expect(other.instructions).toBe("Team notes.");
  });
});

describe("mcpConnector: results", () => {
  it("unwraps structuredContent, JSON text and plain text, and turns isError into a rejection with its text", async () => {
    // greet and fail carry no hints: only destructive tools pause here, so the program runs through.
    const { runtime } = await notesSetup({ approval: "destructive" });
    const outcome = await runtime.execute({
      code: `async () => {
        const added = await notes.add_note({ title: "Milk", body: "2 litres" });
        const read = await notes.get_note({ id: added.id });
        const hello = await notes.greet({ name: "Ann" });
        const list = await notes.list_notes();
        let failure = null;
        try { await notes.fail(); } catch (error) { failure = error.message; }
        let missing = null;
        try { await notes.get_note({ id: 99 }); } catch (error) { missing = error.message; }
        return { added, read, hello, list, failure, missing };
      }`,
    });
    expect(outcome).toMatchObject({
      status: "completed",
      result: {
        added: { id: 1, title: "Milk" },
        read: { id: 1, title: "Milk", body: "2 litres" },
        hello: "Hello, Ann",
        list: [{ id: 1, title: "Milk" }],
        failure: "the disk is full",
        missing: "no note 99",
      },
    });
  });

  it("hands the server each call's idempotency key in _meta, and checks arguments before calling", async () => {
    const { runtime, calls } = await notesSetup();
    const outcome = await runtime.execute({
      code: `async () => {
        await notes.add_note({ title: "Bread" });
        try { await notes.add_note({ title: 7 }); } catch (error) { return error.message; }
      }`,
    });
    expect(outcome).toMatchObject({ status: "completed", result: expect.stringContaining("title") });
    expect(calls).toHaveLength(1);
    expect(calls[0]?.meta).toMatchObject({ [IDEMPOTENCY_KEY_META]: `${outcome.executionId}:0` });
  });
});

describe("mcpConnector: annotations and policy", () => {
  it("destructiveHint pauses for approval; readOnlyHint makes the method readOnly (no write-ahead); hints are kept in the connector's metadata", async () => {
    const { connector, runtime, notes } = await notesSetup();
    expect(connector.tools.delete_note?.requiresApproval).toBe(true);
    expect(connector.tools.get_note?.requiresApproval).toBeUndefined();
    expect(connector.tools.get_note?.readOnly).toBe(true);
    expect(connector.tools.list_notes?.readOnly).toBe(true);
    expect(connector.tools.delete_note?.readOnly).toBeUndefined();
    expect(connector.mcp.tools.get_note).toMatchObject({ readOnly: true, destructive: undefined });
    expect(connector.mcp.tools.delete_note).toMatchObject({ readOnly: false, destructive: true, idempotent: true });
    expect(connector.mcp.tools.add_note).toMatchObject({ readOnly: false, idempotent: false });
    expect((await runtime.search("delete note")).results[0]).toMatchObject({
      path: "notes.delete_note",
      requiresApproval: true,
    });

    const paused = await runtime.execute({
      code: `async () => { const { id } = await notes.add_note({ title: "Old" }); return notes.delete_note({ id }); }`,
    });
    expect(paused).toMatchObject({
      status: "paused",
      pending: [{ connector: "notes", method: "delete_note", args: { id: 1 } }],
    });
    expect(notes.size).toBe(1);
    const done = await runtime.approve({ executionId: paused.executionId });
    expect(done).toMatchObject({ status: "completed", result: "deleted 1" });
    expect(notes.size).toBe(0);
  });

  it("approval: 'unless-read-only' follows the MCP defaults, so unannotated tools pause too", async () => {
    const { connector } = await notesSetup({ approval: "unless-read-only" });
    expect(connector.tools.greet?.requiresApproval).toBe(true);
    expect(connector.tools.list_notes?.requiresApproval).toBeUndefined();
  });

  it("a tool decorated through the tool option pauses, resumes on approve, and reverts on rollback", async () => {
    const reverted: unknown[] = [];
    const { runtime, calls } = await notesSetup({
      tool: (name, definition) =>
        name === "archive-note"
          ? { ...definition, requiresApproval: true, revert: (args) => void reverted.push(args) }
          : name === "delete-note"
            ? { ...definition, requiresApproval: false }
            : undefined,
    });
    const paused = await runtime.execute({
      code: `async () => { await notes.delete_note({ id: 5 }); return notes.archive_note({ id: 5 }); }`,
    });
    expect(paused).toMatchObject({ status: "paused", pending: [{ method: "archive_note", args: { id: 5 } }] });
    expect(calls.map((call) => call.name)).toEqual(["delete-note"]);
    const done = await runtime.approve({ executionId: paused.executionId });
    expect(done).toMatchObject({ status: "completed", result: "archived 5" });
    expect(calls.map((call) => call.name)).toEqual(["delete-note", "archive-note"]);
    const report = await runtime.rollback({ executionId: paused.executionId });
    expect(report.reverted).toEqual([1]);
    expect(reverted).toEqual([{ id: 5 }]);
  });

  it("refuses a decorated policy the runtime would refuse (R-CON-4), naming the tool", async () => {
    await expect(
      notesSetup({
        tool: (name, definition) => (name === "delete-note" ? { ...definition, replay: "reexecute" } : undefined),
      }),
    ).rejects.toThrow(/notes\.delete_note" combines replay: "reexecute" with requiresApproval/);
  });
});

describe("mcpConnector: notifications/tools/list_changed", () => {
  it("lists the tools again; later passes, search and describe see the new set", async () => {
    const paged = createPagedServer([echoTool("first"), echoTool("second")]);
    const client = await pagedClient(paged.server);
    const changes: string[][] = [];
    // echoTool's tools carry no hints; only destructive ones pause here.
    let changed: () => void = () => {};
    const connector = await mcpConnector({
      name: "paged",
      client,
      approval: "destructive",
      onToolsChanged: (methods) => {
        changes.push(methods);
        changed();
      },
    });
    const runtime = createCodemodeRuntime({ connectors: [connector] });
    runtimes.push(runtime);
    expect(await runtime.execute({ code: `async () => paged.first({ text: "a" })` })).toMatchObject({
      status: "completed",
      result: { tool: "first" },
    });

    const refreshed = new Promise<void>((resolve) => (changed = resolve));
    await paged.setTools([echoTool("first"), echoTool("third-one"), echoTool("fourth")]);
    await refreshed;
    expect(changes).toEqual([["first", "third_one", "fourth"]]);
    expect(await runtime.execute({ code: `async () => paged.third_one({ text: "b" })` })).toMatchObject({
      status: "completed",
      result: { tool: "third-one", args: { text: "b" } },
    });
    const gone = await runtime.execute({
      code: `async () => { try { await paged.second({}); } catch (error) { return error.message; } }`,
    });
    expect(gone).toMatchObject({ status: "completed" });
    expect(String((gone as { result?: unknown }).result)).toMatch(/second/);
    expect(await runtime.describe("paged.fourth")).toMatchObject({ kind: "method" });
  });

  it("keeps calling a list_changed handler the application set on the client before", async () => {
    const paged = createPagedServer([echoTool("first")]);
    const client = await pagedClient(paged.server);
    let theirs = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      theirs += 1;
    });
    let changed: () => void = () => {};
    const refreshed = new Promise<void>((resolve) => (changed = resolve));
    const connector = await mcpConnector({ name: "paged", client, onToolsChanged: () => changed() });
    await paged.setTools([echoTool("first"), echoTool("second")]);
    await refreshed;
    expect(Object.keys(connector.tools)).toEqual(["first", "second"]);
    expect(theirs).toBe(1);
  });

  it("a refresh that would collide keeps the previous tools and reports the error", async () => {
    const paged = createPagedServer([echoTool("a-b")]);
    const client = await pagedClient(paged.server);
    let reported: () => void = () => {};
    const errors: Error[] = [];
    const failed = new Promise<void>((resolve) => (reported = resolve));
    const connector = await mcpConnector({
      name: "paged",
      client,
      onError: (error) => {
        errors.push(error);
        reported();
      },
    });
    await paged.setTools([echoTool("a-b"), echoTool("a_b")]);
    await failed;
    expect(errors[0]?.message).toMatch(/would both be paged\.a_b/);
    expect(Object.keys(connector.tools)).toEqual(["a_b"]);
    expect(connector.mcp.tools.a_b?.name).toBe("a-b");
  });
});
